"""HTTP header values without the optional whitespace around them (RFC 9110, section 5.5).

A field value's leading and trailing spaces and tabs are not part of it, but not every HTTP
parser uvicorn may use drops them, and the SDK compares the routing headers (``Mcp-Name``,
``Mcp-Method``, ``Mcp-Param-*``) with the body verbatim: ``Mcp-Name:   greet  `` was refused
as a mismatch. Trimming every value once, at the edge, gives each check the value the sender
meant, whatever the parser.
"""

from __future__ import annotations

_OWS = b" \t"


def trim(headers: list[tuple[bytes, bytes]]) -> list[tuple[bytes, bytes]]:
    """``headers`` with each value stripped of spaces and tabs (done for each HTTP request by
    :class:`toolctl.server.dispatch.Dispatch`, when a value needs it)."""
    return [(k, v.strip(_OWS)) for k, v in headers]
