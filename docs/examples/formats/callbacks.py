"""Handler of the formats example: echoes the call it would queue."""

from __future__ import annotations

from typing import Any


def schedule_call(args: dict[str, Any]) -> dict[str, Any]:
    """The call as it would be queued (the example is about the input checks, not telephony)."""
    return {"queued": True, **args}
