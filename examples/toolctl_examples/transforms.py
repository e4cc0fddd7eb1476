"""Callable transforms of the example registry (the declarative forms need no code).

toolctl calls a transform with one mapping: ``phase``, ``target``, ``toolName``, ``runId`` and the
phase's payload under its own key (``input``, ``output``, ``error``, ``suspendPayload``,
``resumeData``). It returns what the display stream or the transcript shows instead; ``None``
shows nothing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

VISIBLE_TAIL = 4


def customer_card(event: Mapping[str, Any]) -> dict[str, str]:
    """``display.output`` of ``customer_lookup``: a compact card for a UI.

    Name and id on one line, plan, contact, and a hint of the API key made of its last four
    characters — enough for a person to tell keys apart, useless to anyone reading the screen.
    """
    record = event.get("output", event)
    key = str(record.get("apiKey", ""))
    return {
        "customer": f"{record.get('name', '?')} ({record.get('id', '?')})",
        "plan": str(record.get("plan", "")),
        "contact": str(record.get("email", "")),
        "keyHint": "…" + key[-VISIBLE_TAIL:] if len(key) > 2 * VISIBLE_TAIL else "…",
    }
