"""What the serve benchmarks share: the trivial tool as a toolctl registry, and the same tool
served by the SDK's high-level ``MCPServer`` and by a bare low-level SDK ``Server`` (the floor),
as scripts to run in their own processes over stdio or Streamable HTTP."""

from __future__ import annotations

import textwrap
from pathlib import Path

HANDLER = """
def add(data):
    return {"sum": data["a"] + data["b"]}
"""

TOOL = """toolctl: 1
name: {name}
description: Add two integers.
{annotations}handler: benchtools:add
inputSchema:
  type: object
  properties: {{a: {{type: integer}}, b: {{type: integer}}}}
  required: [a, b]
outputSchema:
  type: object
  properties: {{sum: {{type: integer}}}}
  required: [sum]
"""

READ_ONLY = "mcp: {annotations: {readOnlyHint: true}}\n"

# The peer: the SDK's high-level server, the tool declared by its function signature.
MCPSERVER_TOOL = '''
from typing import TypedDict

from mcp.server.mcpserver import MCPServer

server = MCPServer("bench")

class Sum(TypedDict):
    sum: int

@server.tool()
def add(a: int, b: int) -> Sum:
    """Add two integers."""
    return {"sum": a + b}
'''

# The floor: the same tool and result shape as toolctl's (output schema, structured content +
# JSON text) on a bare low-level server.
LOWLEVEL_TOOL = """
import json

import mcp_types as types
from mcp.server.lowlevel import Server

TOOLS = types.ListToolsResult(tools=[types.Tool(
    name="add", description="Add two integers.",
    input_schema={"type": "object", "properties": {"a": {"type": "integer"},
                  "b": {"type": "integer"}}, "required": ["a", "b"]},
    output_schema={"type": "object", "properties": {"sum": {"type": "integer"}},
                   "required": ["sum"]})])

async def list_tools(ctx, params):
    return TOOLS

async def call_tool(ctx, params):
    args = params.arguments or {}
    out = {"sum": args["a"] + args["b"]}
    return types.CallToolResult(content=[types.TextContent(text=json.dumps(out))],
                                structured_content=out)

server = Server("floor", on_list_tools=list_tools, on_call_tool=call_tool)
"""

MCPSERVER_STDIO = MCPSERVER_TOOL + 'server.run("stdio")\n'

LOWLEVEL_STDIO = (
    LOWLEVEL_TOOL
    + """
import anyio
from mcp.server.stdio import stdio_server

async def main():
    async with stdio_server() as (read, write):
        await server.run(read, write, server.create_initialization_options())

anyio.run(main)
"""
)

# Streamable HTTP on a loopback port the kernel picks, announced on stderr the way
# ``toolctl serve`` announces it. uvicorn's ``serve()`` runs under ``anyio.run`` as in
# ``MCPServer.run("streamable-http")`` and ``toolctl serve``, with the uvicorn settings
# ``toolctl serve`` uses (no access log), so that the rows differ only in the MCP application.
HTTP_MAIN = """
import functools, socket, sys
import anyio, uvicorn

sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
sock.bind(("127.0.0.1", 0))
sock.listen(2048)  # connections wait in the backlog until the server accepts them
app = server.streamable_http_app(host="127.0.0.1")
config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on",
                        server_header=False{extra})
print(f"serving on http://127.0.0.1:{{sock.getsockname()[1]}}/mcp", file=sys.stderr, flush=True)
anyio.run(functools.partial(uvicorn.Server(config).serve, sockets=[sock]))
"""


def http_script(tool: str, **uvicorn: str) -> str:
    """A server script: ``tool`` (MCPSERVER_TOOL or LOWLEVEL_TOOL) over Streamable HTTP."""
    extra = "".join(f", {key}={value!r}" for key, value in uvicorn.items())
    return tool + HTTP_MAIN.format(extra=extra)


def registry(root: Path, count: int, state: str | None = None, read_only: bool = True) -> Path:
    """A registry with ``count`` copies of the trivial tool (``add`` first), declared read-only
    (a pure function) unless ``read_only`` is false."""
    (root / "tools.d").mkdir(parents=True)
    (root / "benchtools.py").write_text(textwrap.dedent(HANDLER))
    config = "tools: tools.d\npythonPath: [.]\n" + (f"state: {state}\n" if state else "")
    (root / "toolctl.yaml").write_text(config)
    names = ["add"] + [f"add_{i:04d}" for i in range(1, count)]
    for name in names:
        annotations = READ_ONLY if read_only else ""
        (root / "tools.d" / f"{name}.yaml").write_text(
            TOOL.format(name=name, annotations=annotations)
        )
    return root


def script(root: Path, name: str, text: str) -> Path:
    path = root / name
    path.write_text(text)
    return path


def p(values: list[float], q: float) -> float:
    """The ``q`` quantile of ``values`` (nearest rank)."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]
