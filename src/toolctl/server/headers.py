"""HTTP header values without the optional whitespace around them (RFC 9110, section 5.5).

A field value's leading and trailing spaces and tabs are not part of it, but not every HTTP
parser uvicorn may use drops them, and the SDK compares the routing headers (``Mcp-Name``,
``Mcp-Method``, ``Mcp-Param-*``) with the body verbatim: ``Mcp-Name:   greet  `` was refused
as a mismatch. Trimming every value once, at the edge, gives each check the value the sender
meant, whatever the parser.
"""

from __future__ import annotations

from typing import Any

_OWS = b" \t"


class TrimmedHeaders:
    """ASGI middleware: each HTTP request's header values, stripped of spaces and tabs."""

    def __init__(self, app: Any) -> None:
        self.app = app

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope.get("type") == "http":
            headers = scope.get("headers") or []
            if any(v[:1] in (b" ", b"\t") or v[-1:] in (b" ", b"\t") for _, v in headers):
                trimmed = [(k, v.strip(_OWS)) for k, v in headers]
                scope = {**scope, "headers": trimmed}
        await self.app(scope, receive, send)
