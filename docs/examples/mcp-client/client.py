"""Call a toolctl project's tools from Python through MCP, with the official SDK's client.

It starts `toolctl serve` over stdio in the project directory (as Claude Desktop or Cursor
would), lists the tools, and calls one:

    python client.py PROJECT_DIR TOOL '{"name": "Ada"}'

Needs the `mcp` extra (`pip install '.[mcp]'` from a toolctl checkout).
"""

from __future__ import annotations

import json
import shutil
import sys

import anyio
from mcp import Client, StdioServerParameters


async def main(project: str, tool: str, arguments: dict[str, object]) -> int:
    server = StdioServerParameters(
        command=shutil.which("toolctl") or "toolctl",  # or the absolute path in your venv
        args=["serve"],  # the project is found from the working directory
        cwd=project,
    )
    async with Client(server) as client:
        listed = await client.list_tools()
        print("tools:", ", ".join(sorted(t.name for t in listed.tools)))
        result = await client.call_tool(tool, arguments)
    for block in result.content:  # what the model reads
        if block.type == "text":
            print(block.text)
    if result.structured_content is not None:  # the output, checked against outputSchema
        print("structured:", json.dumps(result.structured_content, ensure_ascii=False))
    return 1 if result.is_error else 0


if __name__ == "__main__":
    project, tool, arguments = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
    sys.exit(anyio.run(main, project, tool, arguments))
