"""Lifecycle hooks: onInputStart, onInputDelta, onInputAvailable, onOutput.

Each hook gets one mapping (``toolName``, ``toolCallId`` (the run id), ``abortSignal`` and the
hook's payload: ``inputTextDelta``, ``input`` or ``output``) and may be sync or async. A hook that
fails is logged (redacted) and noted on the run; it never fails the call.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from toolctl.errors import ToolctlError
from toolctl.runtime.loading import load_callable
from toolctl.runtime.redact import install_log_filter, redact_text

log = logging.getLogger("toolctl.runtime.hooks")
install_log_filter(log)

Resolve = Callable[[Awaitable[Any]], Awaitable[Any]]


async def fire(
    refs: dict[str, str],
    name: str,
    payload: dict[str, Any],
    *,
    python_path: Sequence[str],
    notes: list[str],
    resolve: Resolve,
) -> None:
    """Call hook ``name`` if the tool declares it; record a failure in ``notes``."""
    ref = refs.get(name)
    if ref is None:
        return
    try:
        fn = load_callable(ref, python_path)
        result = fn(payload)
        if inspect.isawaitable(result):
            await resolve(result)
    except ToolctlError as exc:
        _failed(name, ref, exc.message, notes)
    except Exception as exc:
        _failed(name, ref, f"{type(exc).__name__}: {exc}", notes)


def _failed(name: str, ref: str, why: str, notes: list[str]) -> None:
    text = redact_text(f"hook {name} ({ref}) failed: {why}")
    notes.append(text)
    log.warning("%s", text)
