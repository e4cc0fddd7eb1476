"""Argument limits and duplicate keys over MCP: refused as ``toolctl run --input`` refuses them,
over a real stdio subprocess and a real HTTP server (the limits of ``runtime.jsondata``)."""

# slow: these tests start server processes

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolctl.runtime.jsondata import MAX_BYTES
from toolctl.server.strictwire import RAW_ARGUMENTS_KEY, guard

from .serve_helpers import INIT, INITIALIZED, RawServe, http_server, stdio_params, wire

pytestmark = pytest.mark.timeout(90)
HUGE = "x" * (20 * 1024 * 1024)
DUPLICATE_CALL = (
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call",'
    b'"params":{"name":"shout","arguments":{"text":"a","text":"b"}}}'
)

# The same call in protocol 2026-07-28: stateless, its client envelope in _meta.
MODERN_DUPLICATE_CALL = DUPLICATE_CALL.replace(
    b'"b"}}',
    b'"b"},"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28",'
    b'"io.modelcontextprotocol/clientInfo":{"name":"probe","version":"0"},'
    b'"io.modelcontextprotocol/clientCapabilities":{}}}',
)
MODERN_HEADERS = {
    "Mcp-Protocol-Version": "2026-07-28",
    "Mcp-Method": "tools/call",
    "Mcp-Name": "shout",
}


def _text(result: Any) -> str:
    return str(result.content[0].text)


def _stored_runs(registry: Path, tool: str) -> list[Any]:
    from toolctl.runtime.history.sqlite import open_store

    store = open_store(registry / ".toolctl" / "state.db")
    return [r for r in store.query(limit=100) if r.tool == tool]


def test_a_20_mib_argument_is_refused_over_stdio_and_not_stored(registry_dir: Path) -> None:
    from mcp import Client

    async def main() -> Any:
        async with Client(stdio_params(registry_dir), mode="legacy") as c:
            return await c.call_tool("shout", {"text": HUGE})

    result = anyio.run(main)
    assert result.is_error is True
    assert "arguments too large" in _text(result) and f"limit {MAX_BYTES}" in _text(result)
    (run,) = _stored_runs(registry_dir, "shout")
    assert run.status == "failed" and run.input is None  # nothing of the 20 MiB was kept


@pytest.mark.parametrize(
    "line",
    [DUPLICATE_CALL, DUPLICATE_CALL.replace(b'"b"}', b'"b","junk":"\xff"}')],
    ids=["utf-8", "an-invalid-utf-8-byte"],  # the SDK's stdio reads that byte as U+FFFD
)
def test_duplicate_keys_are_refused_over_stdio(registry_dir: Path, line: bytes) -> None:
    server = RawServe(registry_dir)
    server.send(wire(INIT, INITIALIZED))
    server.reply()
    server.send(line + b"\n")
    reply = server.reply()
    server.close()
    result = reply["result"]
    assert result["isError"] is True
    assert "duplicate key 'text'" in result["content"][0]["text"]
    assert result["_meta"]["dev.toolctl/run"]["status"] == "failed"


def _post(
    port: int, body: bytes, session: str | None, more: dict[str, str] | None = None
) -> tuple[str | None, Any]:
    """POST ``body`` to the MCP endpoint: the session id and the JSON-RPC reply (or None)."""
    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Mcp-Protocol-Version": "2025-11-25",
        **(more or {}),
    }
    if session:
        headers["Mcp-Session-Id"] = session
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", "/mcp", body=body, headers=headers)
        response = conn.getresponse()
        text = response.read().decode()
        session = response.getheader("mcp-session-id") or session
    finally:
        conn.close()
    data = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")]
    data = [d for d in data if d] or ([text] if text.strip() else [])
    return session, json.loads(data[-1]) if data else None


def test_duplicate_keys_are_refused_over_http(registry_dir: Path) -> None:
    with http_server(registry_dir) as server:
        session, _ = _post(server.port, json.dumps(INIT).encode(), None)
        _post(server.port, json.dumps(INITIALIZED).encode(), session)
        _, reply = _post(server.port, DUPLICATE_CALL, session)
        _, modern = _post(server.port, MODERN_DUPLICATE_CALL, None, MODERN_HEADERS)
    for result in (reply["result"], modern["result"]):
        assert result["isError"] is True
        assert "duplicate key 'text'" in result["content"][0]["text"]


def test_duplicate_keys_are_refused_over_stdio_in_2026_07_28(registry_dir: Path) -> None:
    server = RawServe(registry_dir)
    server.send(MODERN_DUPLICATE_CALL + b"\n")  # no initialize: the request names its revision
    reply = server.reply()
    server.close()
    assert reply["result"]["isError"] is True
    assert "duplicate key 'text'" in reply["result"]["content"][0]["text"]


@pytest.mark.parametrize("size", [2 * 1024 * 1024, 20 * 1024 * 1024])
def test_a_large_argument_is_refused_over_http(registry_dir: Path, size: int) -> None:
    from mcp import Client

    # A body limit above the argument: the refusal comes from the call pipeline.
    with http_server(registry_dir, "--max-request-bytes", str(64 * 1024 * 1024)) as server:

        async def main() -> Any:
            async with Client(server.url, mode="legacy") as c:
                return await c.call_tool("shout", {"text": "y" * size})

        result = anyio.run(main)
    assert result.is_error is True
    assert "arguments too large" in _text(result)


def test_a_client_cannot_pass_its_own_raw_arguments() -> None:
    sent = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {
            "name": "shout",
            "arguments": {"text": "ok"},
            "_meta": {RAW_ARGUMENTS_KEY: '{"text":"sneaky"}'},
        },
    }
    rewritten = guard(json.dumps(sent).encode())
    assert rewritten is not None
    assert RAW_ARGUMENTS_KEY not in json.loads(rewritten)["params"]["_meta"]


def test_a_client_cannot_pass_its_own_raw_arguments_under_an_escaped_key() -> None:
    sent = (
        b'{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"shout",'
        b'"arguments":{"text":"ok"},"_meta":{"dev.toolctl\\u002frawArguments":"{}"}}}'
    )
    assert RAW_ARGUMENTS_KEY in json.loads(sent)["params"]["_meta"]  # what the SDK would read
    rewritten = guard(sent)
    assert rewritten is not None
    assert RAW_ARGUMENTS_KEY not in json.loads(rewritten)["params"]["_meta"]


def test_escaped_method_names_and_nested_duplicates_are_caught() -> None:
    text = (
        b'{"jsonrpc":"2.0","id":4,"method":"tools\\/call","params":{"name":"t",'
        b'"arguments":{"o":{"k":1,"k":2.50},"n":1e400}}}'
    )
    rewritten = guard(text)
    assert rewritten is not None
    raw = json.loads(rewritten)["params"]["_meta"][RAW_ARGUMENTS_KEY]
    assert raw == '{"o":{"k":1,"k":2.50},"n":1e400}'  # every pair, numbers as written
    assert guard(b'{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{}}') is None


def test_parsed_arguments_meet_the_text_limits() -> None:
    from toolctl.errors import InvalidJSONError
    from toolctl.runtime import jsondata

    jsondata.check({"text": "z" * (MAX_BYTES - 20)})  # just under: accepted
    with pytest.raises(InvalidJSONError, match="arguments too large"):
        jsondata.check({"text": "z" * MAX_BYTES})
    with pytest.raises(InvalidJSONError, match="too large"):  # escapes count, as in the text
        jsondata.check({"text": '"' * (MAX_BYTES // 2 + 10)})
