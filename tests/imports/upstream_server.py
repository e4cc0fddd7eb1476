"""A small stdio MCP server whose tool definitions change on demand (the drift tests' upstream).

``python upstream_server.py DEFS.json`` reads DEFS.json on every ``tools/list`` and
``tools/call``: a test rewrites the file to change a definition under a running server. The
file holds ``{"tools": [...], "mode": ...}``; ``mode`` makes the server misbehave: ``hang``
(never answers a call), ``crash`` (exits on a call), ``huge`` (lists 6,000 tools),
``garbage`` (writes a non-JSON line first). ``echo`` answers with its arguments; ``add`` with
``{"sum": a + b}`` as structured content; ``fail`` with an error result; calls are counted in
``DEFS.json.calls``, started servers in ``DEFS.json.starts``.
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path


def _send(message: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(message) + "\n")
    sys.stdout.flush()


def _tools(defs: dict[str, object]) -> list[object]:
    if defs.get("mode") == "huge":
        return [
            {"name": f"t{i}", "inputSchema": {"type": "object"}, "description": "x"}
            for i in range(6000)
        ]
    tools = defs.get("tools", [])
    return tools if isinstance(tools, list) else []


def _call(name: str, arguments: dict[str, object], defs: dict[str, object]) -> dict[str, object]:
    if name == "add":
        total = arguments.get("a", 0) + arguments.get("b", 0)  # type: ignore[operator]
        return {
            "content": [{"type": "text", "text": str(total)}],
            "structuredContent": {"sum": total},
        }
    if name == "fail":
        return {"content": [{"type": "text", "text": "upstream says no"}], "isError": True}
    return {"content": [{"type": "text", "text": json.dumps(arguments, sort_keys=True)}]}


def _count(path: Path) -> None:
    path.write_text(str(int(path.read_text() or 0) + 1 if path.exists() else 1))


def main() -> None:
    path = Path(sys.argv[1])
    _count(path.with_name(path.name + ".starts"))
    for line in sys.stdin:
        message = json.loads(line)
        method, ident = message.get("method"), message.get("id")
        if ident is None:
            continue
        defs = json.loads(path.read_text())
        if method == "initialize":
            result: dict[str, object] = {
                "protocolVersion": message["params"]["protocolVersion"],
                "capabilities": {"tools": {"listChanged": True}},
                "serverInfo": {"name": "drift-demo", "version": "1.0.0"},
            }
        elif method == "tools/list":
            result = {"tools": _tools(defs)}
        elif method == "tools/call":
            _count(path.with_name(path.name + ".calls"))
            if defs.get("mode") == "hang":
                time.sleep(3600)
            if defs.get("mode") == "crash":
                sys.stderr.write("boom: the upstream crashed\n")
                sys.exit(7)
            if defs.get("mode") == "garbage":
                sys.stdout.write("this is not JSON\n")
            params = message["params"]
            result = _call(params["name"], params.get("arguments") or {}, defs)
        else:
            _send({"jsonrpc": "2.0", "id": ident, "error": {"code": -32601, "message": method}})
            continue
        _send({"jsonrpc": "2.0", "id": ident, "result": result})


if __name__ == "__main__":
    main()
