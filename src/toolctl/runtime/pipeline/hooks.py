"""Lifecycle hooks: onInputStart, onInputDelta, onInputAvailable, onOutput.

Each hook gets one mapping (``toolName``, ``toolCallId`` (the run id), ``abortSignal`` and the
hook's payload: ``inputTextDelta``, ``input`` or ``output``) and may be sync or async. A hook that
fails is logged (redacted) and noted on the run; it never fails the call.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Sequence
from typing import Any

from toolctl.errors import ToolctlError
from toolctl.runtime.exctext import describe
from toolctl.runtime.execution.invoke import in_task, is_async, off_loop
from toolctl.runtime.execution.loading import load_callable
from toolctl.runtime.redact import install_log_filter

log = logging.getLogger("toolctl.runtime.pipeline.hooks")
install_log_filter(log)


async def fire(
    refs: dict[str, str],
    name: str,
    payload: dict[str, Any],
    *,
    python_path: Sequence[str],
    note: Callable[[str], str],
) -> None:
    """Call hook ``name`` if the tool declares it; a failure becomes a note of the run (``note``
    redacts it and returns the redacted text) and a warning in the log."""
    ref = refs.get(name)
    if ref is None:
        return
    try:
        fn = load_callable(ref, python_path)
        if is_async(fn):
            result = fn(payload)
        else:  # user code that may block: never on a shared event loop
            result = await off_loop(fn, payload, name="toolctl-hook")
        if inspect.isawaitable(result):
            await in_task(result)
    except ToolctlError as exc:
        _failed(name, ref, exc.message, note)
    except Exception as exc:
        _failed(name, ref, describe(exc), note)


def _failed(name: str, ref: str, why: str, note: Callable[[str], str]) -> None:
    log.warning("%s", note(f"hook {name} ({ref}) failed: {why}"))
