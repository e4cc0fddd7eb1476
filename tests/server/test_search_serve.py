"""``toolctl serve --search``: the eager tools plus search_tools and call_tool, with the official
MCP Python client over stdio and HTTP, in both protocol revisions.

The ranking engine is ``toolctl.search`` (whichever is installed): these tests assert only what
any reasonable ranker gives (an exact-name query finds its tool).
"""

# slow: these tests start server processes

from __future__ import annotations

import json
import textwrap
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from .serve_helpers import http_server, run_serve, stdio_params

pytestmark = pytest.mark.timeout(120)
MODERN, LEGACY = "2026-07-28", "2025-11-25"
Body = Callable[[Any], Awaitable[Any]]

CONFIG = """\
tools: tools.d
pythonPath: [.]
state: .toolctl/state.db
toolsets:
  math:
    description: Arithmetic on whole numbers
    loading: deferred
"""
TOOLS = """\
toolctl: 1
tools:
  - name: add
    description: Add two integers and return their sum.
    handler: catalogtools:add
    toolset: math
    loading: eager
    inputSchema:
      type: object
      properties: {a: {type: integer}, b: {type: integer}}
      required: [a, b]
  - name: multiply
    description: Multiply two integers and return their product.
    handler: catalogtools:multiply
    toolset: math
    inputSchema:
      type: object
      properties: {a: {type: integer}, b: {type: integer}}
      required: [a, b]
      additionalProperties: false
    outputSchema:
      type: object
      properties: {product: {type: integer}}
      required: [product]
  - name: wipe_disk
    description: Erase every file on a disk.
    handler: catalogtools:wipe
    loading: deferred
    requireApproval: true
    inputSchema:
      type: object
      properties: {disk: {type: string}}
      required: [disk]
"""
HANDLERS = """\
def add(data):
    return {"sum": data["a"] + data["b"]}


def multiply(data):
    return {"product": data["a"] * data["b"]}


def wipe(data):
    raise RuntimeError("wipe ran: approval was bypassed")
"""


def _project(tmp_path: Path, config: str = CONFIG) -> Path:
    root = tmp_path / "catalog"
    (root / "tools.d").mkdir(parents=True)
    (root / "toolctl.yaml").write_text(config)
    (root / "tools.d" / "tools.yaml").write_text(TOOLS)
    (root / "catalogtools.py").write_text(textwrap.dedent(HANDLERS))
    return root


def over_stdio(root: Path, body: Body, *args: str, **client: Any) -> Any:
    from mcp import Client

    async def main() -> Any:
        async with Client(stdio_params(root, *args), **client) as c:
            return await body(c)

    return anyio.run(main)


def over_http(url: str, body: Body, **client: Any) -> Any:
    from mcp import Client

    async def main() -> Any:
        async with Client(url, **client) as c:
            return await body(c)

    return anyio.run(main)


async def _session(c: Any) -> dict[str, Any]:
    """Everything a client of a --search server sees, for the assertions."""
    listed = await c.list_tools()
    found = await c.call_tool("search_tools", {"query": "multiply"})
    none = await c.call_tool("search_tools", {"query": "multiply", "limit": 0})
    via = await c.call_tool("call_tool", {"name": "multiply", "arguments": {"a": 6, "b": 7}})
    direct = await c.call_tool("multiply", {"a": 2, "b": 5})
    invalid = await c.call_tool("call_tool", {"name": "multiply", "arguments": {"a": "six"}})
    invalid_direct = await c.call_tool("multiply", {"a": "six"})
    unknown = await c.call_tool("call_tool", {"name": "divide", "arguments": {}})
    wipe = await c.call_tool("call_tool", {"name": "wipe_disk", "arguments": {"disk": "sda"}})
    return {
        "version": c.protocol_version,
        "listed": [t.name for t in listed.tools],
        "schemas": {t.name: t.input_schema for t in listed.tools},
        "found": found,
        "none": none,
        "via": via,
        "direct": direct,
        "invalid": invalid,
        "invalid_direct": invalid_direct,
        "unknown": unknown,
        "wipe": wipe,
    }


def _text(result: Any) -> str:
    return " ".join(getattr(block, "text", "") for block in result.content)


def _check(seen: dict[str, Any]) -> None:
    # up front: the eager tool and the two meta-tools, not the deferred ones
    assert seen["listed"] == ["add", "search_tools", "call_tool"]
    assert seen["schemas"]["search_tools"]["required"] == ["query"]
    assert set(seen["schemas"]["call_tool"]["required"]) == {"name", "arguments"}
    # an exact-name query finds its tool, as a full MCP Tool object
    tools = seen["found"].structured_content["tools"]
    assert seen["found"].is_error is False and tools[0]["name"] == "multiply"
    assert tools[0]["inputSchema"]["required"] == ["a", "b"] and "description" in tools[0]
    assert json.loads(_text(seen["found"]))["tools"][0]["name"] == "multiply"
    assert seen["none"].is_error is True and "limit" in _text(seen["none"])
    # call_tool runs the tool through the pipeline; the deferred tool is callable by name too
    assert seen["via"].is_error is False and seen["via"].structured_content == {"product": 42}
    assert seen["direct"].structured_content == {"product": 10}
    # validation holds through call_tool exactly as for a direct call
    assert seen["invalid"].is_error is True and seen["invalid_direct"].is_error is True
    assert "six" in _text(seen["invalid"]) or "integer" in _text(seen["invalid"])
    assert _text(seen["invalid"]) == _text(seen["invalid_direct"])
    assert seen["unknown"].is_error is True and "search_tools" in _text(seen["unknown"])
    # approval holds through call_tool: the client cannot elicit, so the tool did not run
    assert seen["wipe"].is_error is True and "Approval required" in _text(seen["wipe"])


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_search_over_stdio_lists_eager_tools_and_calls_through_the_pipeline(
    tmp_path: Path, mode: str
) -> None:
    root = _project(tmp_path)
    seen = over_stdio(root, _session, "--search", mode=mode)
    assert seen["version"] == (MODERN if mode == "auto" else LEGACY)
    _check(seen)


def test_search_over_http_from_the_config_setting_in_both_revisions(tmp_path: Path) -> None:
    root = _project(tmp_path, CONFIG + "serve:\n  search: true\n")
    with http_server(root) as server:
        modern = over_http(server.url, _session)
        legacy = over_http(server.url, _session, mode="legacy")
    assert (modern["version"], legacy["version"]) == (MODERN, LEGACY)
    _check(modern)
    _check(legacy)
    assert "wipe ran" not in "".join(server.log)


def test_without_search_every_tool_is_listed_and_no_meta_tool(tmp_path: Path) -> None:
    async def names(c: Any) -> list[str]:
        return [t.name for t in (await c.list_tools()).tools]

    root = _project(tmp_path, CONFIG + "serve:\n  search: true\n")
    assert over_stdio(root, names, "--no-search") == ["add", "multiply", "wipe_disk"]


def test_a_tool_named_like_a_meta_tool_is_refused_at_start(tmp_path: Path) -> None:
    root = _project(tmp_path)
    extra = "toolctl: 1\nname: call_tool\ndescription: Shadows the meta-tool.\n"
    (root / "tools.d" / "clash.yaml").write_text(extra)
    done = run_serve(root, "--search")
    assert done.returncode == 2, done.stderr
    assert "call_tool" in done.stderr and "clash.yaml:" in done.stderr
    assert "Traceback" not in done.stderr


def test_call_tool_reaches_only_served_tools_and_never_itself(tmp_path: Path) -> None:
    async def body(c: Any) -> dict[str, Any]:
        return {
            "listed": [t.name for t in (await c.list_tools()).tools],
            "found": await c.call_tool("search_tools", {"query": "wipe_disk"}),
            "wipe": await c.call_tool(
                "call_tool", {"name": "wipe_disk", "arguments": {"disk": "sda"}}
            ),
            "nested": await c.call_tool(
                "call_tool",
                {"name": "call_tool", "arguments": {"name": "wipe_disk", "arguments": {}}},
            ),
            "extra": await c.call_tool(
                "call_tool", {"name": "multiply", "arguments": {}, "approve": True}
            ),
        }

    root = _project(tmp_path)
    seen = over_stdio(root, body, "--search", "add", "multiply")
    assert seen["listed"] == ["add", "search_tools", "call_tool"]
    # a tool the server does not serve is neither found nor callable through call_tool
    assert seen["found"].is_error is False and seen["found"].structured_content == {"tools": []}
    assert seen["wipe"].is_error is True and "no tool named 'wipe_disk'" in _text(seen["wipe"])
    assert seen["nested"].is_error is True and "cannot call call_tool" in _text(seen["nested"])
    assert seen["extra"].is_error is True and "call_tool takes" in _text(seen["extra"])


def test_a_duplicate_key_inside_call_tool_is_refused(tmp_path: Path) -> None:
    from .serve_helpers import INIT, INITIALIZED, RawServe, wire

    root = _project(tmp_path, CONFIG + "serve:\n  search: true\n")
    server = RawServe(root)
    server.send(wire(INIT, INITIALIZED))
    server.reply()
    server.send(
        b'{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"call_tool",'
        b'"arguments":{"name":"multiply","arguments":{"a":2,"a":3,"b":4}}}}\n'
    )
    reply = server.reply()
    server.close()
    result = reply["result"]
    assert result["isError"] is True and "duplicate key" in result["content"][0]["text"]
