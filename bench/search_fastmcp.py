"""Rank queries with FastMCP's BM25SearchTransform (run by bench/bench_search.py).

    PYTHON_WITH_FASTMCP bench/search_fastmcp.py CATALOG.jsonl K < queries.jsonl

Reads ``{"query"}`` lines on stdin and writes, per line, the JSON list of the names its
``search_tools`` would return (the transform's own ``_search``, which builds its BM25 index
from FastMCP's searchable text of each tool: name, description, parameter names and
descriptions). FastMCP never abstains: it returns every tool with a positive score, best first.
"""

from __future__ import annotations

import asyncio
import json
import sys

from fastmcp.server.transforms.search.bm25 import BM25SearchTransform
from fastmcp.tools.base import Tool


def main() -> None:
    catalog, k = sys.argv[1], int(sys.argv[2])
    tools = []
    with open(catalog, encoding="utf-8") as f:
        for line in f:
            fn = json.loads(line)
            tools.append(
                Tool(
                    name=fn["name"],
                    description=fn.get("description") or "",
                    parameters=fn.get("parameters") or {"type": "object"},
                )
            )
    transform = BM25SearchTransform(max_results=k)

    async def run() -> None:
        for line in sys.stdin:
            if line.strip():
                found = await transform._search(tools, json.loads(line)["query"])
                sys.stdout.write(json.dumps([t.name for t in found]) + "\n")

    asyncio.run(run())


if __name__ == "__main__":
    main()
