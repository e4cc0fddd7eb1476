"""Callable transforms used by the example registry (the declarative forms need no code).

A transform callable receives the phase's payload and returns what the display stream or the
transcript shows instead. Like Mastra's ``({output}) => ...`` it may receive the payload wrapped
as ``{"output": payload}``; both shapes are accepted.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

SECRET_KEYS = frozenset({"apiKey", "api_key", "token", "password", "secret"})
VISIBLE_TAIL = 4


def mask_secrets(payload: Any, *_: Any, **__: Any) -> Any:
    """Replace secret fields with a hint that keeps only their last characters.

    ``{"apiKey": "sk_live_acme_4f9a2c7e1b"}`` → ``{"apiKey": "…7e1b"}``, enough for a person to
    tell keys apart, useless to anyone who reads the screen.
    """
    if isinstance(payload, Mapping) and set(payload) == {"output"}:
        payload = payload["output"]
    if not isinstance(payload, Mapping):
        return payload
    return {key: _mask(value) if key in SECRET_KEYS else value for key, value in payload.items()}


def _mask(value: Any) -> str:
    text = str(value)
    return "…" + text[-VISIBLE_TAIL:] if len(text) > 2 * VISIBLE_TAIL else "…"
