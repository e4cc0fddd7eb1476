"""Lifecycle hooks for the example tools: each one logs what it sees through :mod:`logging`.

toolctl calls them in the seed's order: ``on_input_start`` when input starts streaming,
``on_input_delta`` per chunk, ``on_input_available`` once the input is parsed and validated,
``on_output`` after the handler succeeded. Each receives one mapping describing the event
(run id, tool name and the phase's data, like Mastra's ``ToolCallOptions``); extra arguments
are accepted so the hooks keep working if the runtime passes more. A hook that raises is logged
by toolctl and never fails the call.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

logger = logging.getLogger("toolctl_examples.hooks")

MAX_LOGGED = 200


def on_input_start(event: Mapping[str, Any] | None = None, *_: Any, **extra: Any) -> None:
    """Input for a call started to arrive."""
    logger.info("input started: %s", _who(event, extra))


def on_input_delta(event: Mapping[str, Any] | None = None, *_: Any, **extra: Any) -> None:
    """A chunk of input text arrived (``inputTextDelta``)."""
    delta = _field(event, extra, "inputTextDelta", "delta")
    logger.debug("input delta: %s +%d chars", _who(event, extra), len(str(delta or "")))


def on_input_available(event: Mapping[str, Any] | None = None, *_: Any, **extra: Any) -> None:
    """The whole input is parsed and valid."""
    logger.info("input available: %s %s", _who(event, extra), _short(_field(event, extra, "input")))


def on_output(event: Mapping[str, Any] | None = None, *_: Any, **extra: Any) -> None:
    """The handler returned output (already validated against ``outputSchema``)."""
    logger.info("output: %s %s", _who(event, extra), _short(_field(event, extra, "output")))


def _field(event: Mapping[str, Any] | None, extra: Mapping[str, Any], *names: str) -> Any:
    for source in (event or {}, extra):
        for name in names:
            if name in source:
                return source[name]
    return None


def _who(event: Mapping[str, Any] | None, extra: Mapping[str, Any]) -> str:
    tool = _field(event, extra, "toolName", "tool_name", "tool")
    run = _field(event, extra, "runId", "run_id", "toolCallId")
    return f"{tool or '?'}#{run or '?'}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_LOGGED else text[: MAX_LOGGED - 1] + "…"
