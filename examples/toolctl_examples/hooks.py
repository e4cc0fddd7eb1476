"""Lifecycle hooks for the example tools: each one logs what it sees through :mod:`logging`.

toolctl calls them in the seed's order — ``on_input_start`` when input starts streaming,
``on_input_delta`` per chunk, ``on_input_available`` once the input is parsed and valid,
``on_output`` after the handler succeeded — each with one mapping: ``toolName``, ``toolCallId``
(the run id), ``abortSignal`` and the phase's data (``inputTextDelta``, ``input`` or ``output``).
A hook that raises is logged by toolctl and never fails the call.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

logger = logging.getLogger("toolctl_examples.hooks")

MAX_LOGGED = 200


def on_input_start(event: Mapping[str, Any]) -> None:
    """Input for a call started to arrive."""
    logger.info("input started: %s", _who(event))


def on_input_delta(event: Mapping[str, Any]) -> None:
    """A chunk of input text arrived."""
    logger.debug("input delta: %s +%d chars", _who(event), len(event.get("inputTextDelta", "")))


def on_input_available(event: Mapping[str, Any]) -> None:
    """The whole input is parsed and valid."""
    logger.info("input available: %s %s", _who(event), _short(event.get("input")))


def on_output(event: Mapping[str, Any]) -> None:
    """The handler returned output (already validated against ``outputSchema``)."""
    logger.info("output: %s %s", _who(event), _short(event.get("output")))


def _who(event: Mapping[str, Any]) -> str:
    return f"{event.get('toolName', '?')}#{event.get('toolCallId', '?')}"


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= MAX_LOGGED else text[: MAX_LOGGED - 1] + "…"
