"""OpenTelemetry spans for runs, when the application configured a tracer provider.

toolctl never configures OpenTelemetry itself and never imports it first: a span is made only
when ``opentelemetry.trace`` is already imported and a real provider is set, as
``opentelemetry-instrument`` (which reads the standard ``OTEL_*`` environment variables) or the
application does. Otherwise every function here is a dictionary lookup and returns at once.

Attribute names follow the GenAI semantic conventions (``gen_ai.operation.name:
execute_tool``, ``gen_ai.tool.name``, ``gen_ai.tool.call.id``); toolctl adds ``toolctl.run.*``.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolctl.runtime.result import RunResult


def tracer() -> Any:
    """toolctl's tracer, or None when no tracer provider is configured."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if type(provider).__name__ in ("ProxyTracerProvider", "NoOpTracerProvider"):
        return None
    return trace.get_tracer("toolctl")


@contextlib.contextmanager
def run_span(tool: str, operation: str = "execute_tool") -> Iterator[Any]:
    """An ``execute_tool <tool>`` span around a run started outside a server (the CLI), or
    None without a tracer provider. Handler spans (``ctx.observe.span``) nest under it."""
    found = tracer()
    if found is None:
        yield None
        return
    attributes = {"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": tool}
    if operation != "execute_tool":
        attributes["toolctl.operation"] = operation
    with found.start_as_current_span(f"execute_tool {tool}", attributes=attributes) as span:
        yield span


def run_attributes(result: RunResult) -> dict[str, Any]:
    """What the runtime knows of a finished (or paused) run, as span attributes."""
    attributes: dict[str, Any] = {
        "gen_ai.tool.call.id": result.run_id,
        "toolctl.run.id": result.run_id,
        "toolctl.run.status": result.status.value,
    }
    if result.duration_ms is not None:
        attributes["toolctl.run.duration_ms"] = result.duration_ms
    if result.error is not None:
        attributes["toolctl.error.code"] = result.error.code
    return attributes


def describe_run(span: Any, result: RunResult) -> None:
    """Put :func:`run_attributes` on ``span`` (a run that did not succeed marks it an error)."""
    if span is None or not span.is_recording():
        return
    span.set_attributes(run_attributes(result))
    if result.error is not None:
        from opentelemetry.trace import StatusCode

        span.set_attribute("error.type", result.error.code)
        span.set_status(StatusCode.ERROR, result.error.code)
