"""OpenTelemetry for tool calls served over MCP.

The SDK opens one SERVER span per request (``tools/call <tool>``) following the MCP and GenAI
semantic conventions (``mcp.method.name``, ``gen_ai.operation.name: execute_tool``,
``gen_ai.tool.name``), continuing the trace context the client sent in ``_meta``
(``traceparent``). toolctl adds what only the runtime knows to that span: the call id (the run
id), the run's status and handler duration, the runtime's error code (the SDK sets
``error.type: tool_error`` for an ``isError`` result), and
(only with ``serve --trace-arguments``) the arguments as the run history keeps them: redacted,
never a secret. Handler spans (``ctx.observe.span``) nest under it.

Nothing happens unless the application configured a tracer provider (the ``otel`` extra of
toolctl-registry installs the OpenTelemetry SDK): the check is one dictionary lookup and one call.
"""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolctl.runtime import RunResult


def record_call(result: RunResult, *, arguments: bool = False) -> None:
    """Describe the finished (or paused) run on the current span, when one is recording."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return
    span = trace.get_current_span()
    if not span.is_recording():
        return
    status = result.status.value
    attributes: dict[str, Any] = {
        "gen_ai.tool.call.id": result.run_id,
        "toolctl.run.id": result.run_id,
        "toolctl.run.status": status,
    }
    if result.duration_ms is not None:
        attributes["toolctl.run.duration_ms"] = result.duration_ms
    if result.error is not None:  # the SDK sets error.type (tool_error) from isError
        attributes["toolctl.error.code"] = result.error.code
    if arguments and "input" in result.transcript:
        shown = result.transcript["input"]  # the transcript view: transforms and redaction applied
        attributes["gen_ai.tool.call.arguments"] = json.dumps(shown, ensure_ascii=False)
    span.set_attributes(attributes)
