"""OpenTelemetry for tool calls served over MCP.

The SDK opens one SERVER span per request (``tools/call <tool>``) following the MCP and GenAI
semantic conventions (``mcp.method.name``, ``gen_ai.operation.name: execute_tool``,
``gen_ai.tool.name``), continuing the trace context the client sent in ``_meta``
(``traceparent``). toolctl adds what only the runtime knows to that span: the call id (the run
id), the run's status and handler duration, the runtime's error code (the SDK sets
``error.type: tool_error`` for an ``isError`` result), and
(only with ``serve --trace-arguments``) the arguments as the run history keeps them: redacted,
never a secret. Handler spans (``ctx.observe.span``) nest under it.

Every request, ``tools/list`` and ``server/discover`` included, has its span (the pre-built list
answer runs inside it); :class:`ConnectionAttributes` adds the connection's attributes to it.

Nothing happens unless the application configured a tracer provider (the ``otel`` extra of
toolctl-registry installs the OpenTelemetry SDK): the check is one dictionary lookup and one call.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

from toolctl.runtime.pipeline.tracing import run_attributes
from toolctl.server.identity import caller

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from toolctl.runtime import RunResult


def record_call(result: RunResult, *, arguments: bool = False) -> None:
    """Describe the finished (or paused) run on the current span, when one is recording."""
    span = _current_span()
    if span is None:
        return
    attributes = run_attributes(result)
    if arguments and "input" in result.transcript:
        shown = result.transcript["input"]  # the transcript view: transforms and redaction applied
        attributes["gen_ai.tool.call.arguments"] = json.dumps(shown, ensure_ascii=False)
    span.set_attributes(attributes)


def _current_span() -> Any:
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    span = trace.get_current_span()
    return span if span.is_recording() else None


class ConnectionAttributes:
    """The MCP semantic conventions' connection attributes on every request's span
    (``network.transport``; over HTTP ``server.address``/``server.port``,
    ``client.address``/``client.port`` and, for a 2025-11-25 session, ``mcp.session.id``), put
    there by the server's middleware, inside the SDK's span (:meth:`annotate`). ``transport``
    is ``stdio`` or ``http`` (None in memory)."""

    def __init__(self) -> None:
        self.transport: str | None = None

    def annotate(self, ctx: ServerRequestContext[Any, Any]) -> None:
        """Put ``ctx``'s attributes on the current span, if one is recording."""
        if self.transport is not None:
            span = _current_span()
            if span is not None:
                span.set_attributes(self.attributes(ctx))

    def attributes(self, ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
        """The attributes for ``ctx``'s request."""
        if self.transport == "stdio":
            return {"network.transport": "pipe"}
        out: dict[str, Any] = {"network.transport": "tcp", "network.protocol.name": "http"}
        request = ctx.request
        client = getattr(request, "client", None)
        if client is not None:
            out["client.address"], out["client.port"] = client.host, client.port
        url = getattr(request, "url", None)
        if url is not None and url.hostname:
            out["server.address"] = url.hostname
            if url.port:
                out["server.port"] = url.port
        headers = getattr(request, "headers", None)
        session = headers.get("mcp-session-id") if headers is not None else None
        if session:
            out["mcp.session.id"] = session
        who = caller(ctx)
        if who is not None:  # OpenTelemetry's end-user attributes: who asked (never a token)
            out["enduser.id"] = who.subject
            out["toolctl.principal.issuer"] = who.issuer
            if who.client_id is not None:
                out["toolctl.principal.client_id"] = who.client_id
        return out
