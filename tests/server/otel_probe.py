"""Run by test_telemetry in a fresh interpreter (a tracer provider is process-global): serve the
test registry in memory, call tools with the SDK client under a client span, print the spans."""

from __future__ import annotations

import json
import sys
from typing import Any

import anyio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)


async def main(registry: str, trace_arguments: bool) -> None:
    from mcp import Client

    import toolctl
    from toolctl.server.app import ToolServer
    from toolctl.server.toolset import build_toolset

    server = ToolServer(build_toolset(toolctl.load(registry)), trace_arguments=trace_arguments)
    client_tracer = trace.get_tracer("probe-client")
    with client_tracer.start_as_current_span("client") as parent:
        carrier: dict[str, Any] = {}
        from opentelemetry.propagate import inject

        inject(carrier)
        async with Client(server.lowlevel, mode="legacy") as c:
            await c.call_tool("add", {"a": 1, "b": 2}, meta=carrier)  # type: ignore[arg-type]
            await c.call_tool("leaky", {}, meta=carrier)  # type: ignore[arg-type]
        trace_id = parent.get_span_context().trace_id
    spans = [
        {
            "name": s.name,
            "trace_id": s.context.trace_id,
            "attributes": dict(s.attributes or {}),
        }
        for s in exporter.get_finished_spans()
        if s.name.startswith("tools/call")
    ]
    print(json.dumps({"trace_id": trace_id, "spans": spans}))


anyio.run(main, sys.argv[1], sys.argv[2] == "1")
