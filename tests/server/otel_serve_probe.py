"""Run by test_telemetry in a fresh interpreter (a tracer provider is process-global), with an
in-memory span exporter: ``serve`` serves the registry over HTTP (``http`` mode) and the SDK
client lists and calls in both revisions; or (``cli`` mode) ``toolctl run`` calls a tool.
Prints every finished span (name, kind, attributes) as one JSON line."""

from __future__ import annotations

import json
import queue
import sys
import threading

import anyio
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

exporter = InMemorySpanExporter()
provider = TracerProvider()
provider.add_span_processor(SimpleSpanProcessor(exporter))
trace.set_tracer_provider(provider)


def over_http() -> None:
    import toolctl
    from toolctl.server.run import ServeOptions, serve

    urls: queue.Queue[str] = queue.Queue()
    options = ServeOptions(transport="http", port=0, on_ready=urls.put)
    threading.Thread(target=serve, args=(toolctl.load_project("."), options), daemon=True).start()
    url = urls.get(timeout=60)

    async def main() -> None:
        from mcp import Client

        for mode in ("auto", "legacy"):
            async with Client(url, mode=mode) as c:
                await c.list_tools()
                await c.call_tool("add", {"a": 1, "b": 2})

    anyio.run(main)


def from_the_cli() -> None:
    from toolctl.cli.app import run

    assert run(["run", "add", "--input", '{"a": 1, "b": 2}']) == 0
    assert run(["run", "leaky", "--input", "{}"]) == 1


(over_http if sys.argv[1] == "http" else from_the_cli)()
shown = [
    {"name": s.name, "kind": s.kind.name, "attributes": dict(s.attributes or {})}
    for s in exporter.get_finished_spans()
]
print(json.dumps(shown))
sys.stdout.flush()
