"""HTTP transport safety (reliability notes §2.6 cases 61-63 and 66) on a real loopback server."""

from __future__ import annotations

import http.client
import json
import socket
from pathlib import Path

import anyio
import pytest

from .serve_helpers import INIT, HttpServer, http_server, run_serve

pytestmark = pytest.mark.timeout(60)
TOKEN = "s3cret-token-for-tests"
# The tests that only send requests to a server started with the defaults share one
# (tests/server/conftest.py: shared_http_server).
shared = pytest.mark.xdist_group("http-security")


def post(server: HttpServer, body: bytes | dict[str, object], **headers: str) -> int:
    """POST to the MCP endpoint; the HTTP status."""
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Host": f"127.0.0.1:{server.port}",
    }
    sent.update({k.replace("_", "-"): v for k, v in headers.items()})
    try:
        conn.putrequest("POST", "/mcp", skip_host=True, skip_accept_encoding=True)
        for key, value in sent.items():
            conn.putheader(key, value)
        conn.putheader("Content-Length", str(len(data)))
        conn.endheaders(data)
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def matrix(server: HttpServer, **auth: str) -> dict[str, int]:
    port = server.port
    return {
        "legit": post(server, INIT, **auth),
        "evil host": post(server, INIT, Host=f"attacker.example:{port}", **auth),
        "evil origin": post(server, INIT, Origin="http://attacker.example", **auth),
        "null origin": post(server, INIT, Origin="null", **auth),
        "text/plain": post(server, INIT, Content_Type="text/plain", **auth),
    }


EXPECTED = {
    "legit": 200,
    "evil host": 421,
    "evil origin": 403,
    "null origin": 403,
    "text/plain": 400,
}


@shared
def test_loopback_default_checks_host_origin_and_content_type(
    shared_http_server: HttpServer,
) -> None:
    server = shared_http_server
    assert server.url.startswith("http://127.0.0.1:")
    assert matrix(server) == EXPECTED
    assert post(server, INIT, Origin=f"http://localhost:{server.port}") == 200


def test_non_loopback_bind_needs_allowed_host_and_token(registry_dir: Path) -> None:
    proc = run_serve(registry_dir, "--transport", "http", "--host", "0.0.0.0")
    assert proc.returncode == 2
    assert "refusing to serve on 0.0.0.0" in proc.stderr
    assert "--allowed-host and --auth-token-env" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_auth_token_variable_must_be_set(registry_dir: Path) -> None:
    proc = run_serve(
        registry_dir,
        "--transport",
        "http",
        "--host",
        "0.0.0.0",
        "--allowed-host",
        "mcp.test",
        "--auth-token-env",
        "TOOLCTL_TEST_UNSET_TOKEN",
    )
    assert proc.returncode == 2
    assert "TOOLCTL_TEST_UNSET_TOKEN is not set" in proc.stderr


def test_non_loopback_with_allowed_host_and_token_applies_the_same_matrix(
    registry_dir: Path,
) -> None:
    args = ("--host", "0.0.0.0", "--allowed-host", "127.0.0.1", "--auth-token-env", "MCP_TOKEN")
    with http_server(registry_dir, *args, env={"MCP_TOKEN": TOKEN}) as server:
        assert post(server, INIT) == 401
        assert post(server, INIT, Authorization="Bearer wrong") == 401
        assert matrix(server, Authorization=f"Bearer {TOKEN}") == EXPECTED


@shared
def test_body_over_the_limit_is_413(shared_http_server: HttpServer) -> None:
    server = shared_http_server
    big = b'{"jsonrpc":"2.0","id":1,"method":"ping","pad":"' + b"x" * (4 * 1024 * 1024)
    assert post(server, big + b'"}') == 413
    assert post(server, INIT) == 200


@shared
def test_malformed_requests_and_disconnects_do_not_stop_the_server(
    shared_http_server: HttpServer,
) -> None:
    server = shared_http_server
    assert post(server, b"{not json") == 400
    assert post(server, {"jsonrpc": "2.0", "id": 2, "method": "no/such"}) in (400, 404)
    assert post(server, {"jsonrpc": "2.0", "id": 10**40, "method": "ping"}) in (200, 400)
    assert post(server, b"[1, 2, 3]") == 400
    # A client that sends half a request and goes away.
    with socket.create_connection(("127.0.0.1", server.port)) as sock:
        sock.sendall(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100\r\n\r\n{")
    assert post(server, INIT) == 200
    assert "add" in anyio.run(_names, server.url)


async def _names(url: str) -> list[str]:
    from mcp import Client

    async with Client(url, mode="legacy") as client:
        result = await client.list_tools()
    return [t.name for t in result.tools]


@shared
def test_a_client_that_disconnects_mid_call_cancels_the_run(
    shared_http_server: HttpServer, shared_registry: Path
) -> None:
    server = shared_http_server
    from toolctl.runtime.history.sqlite import open_store

    headers = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
    }
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("POST", "/mcp", json.dumps(INIT), headers)
    response = conn.getresponse()
    response.read()
    headers["mcp-session-id"] = response.getheader("mcp-session-id") or ""
    headers["mcp-protocol-version"] = "2025-11-25"
    initialized = {"jsonrpc": "2.0", "method": "notifications/initialized"}
    conn.request("POST", "/mcp", json.dumps(initialized), headers)
    conn.getresponse().read()
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "sleepy", "arguments": {"steps": 600}},
    }
    conn.request("POST", "/mcp", json.dumps(call), headers)
    assert conn.getresponse().status == 200  # the call is running, streaming its answer
    conn.close()  # ... and the client goes away
    db = shared_registry / ".toolctl" / "state.db"

    def statuses() -> list[str]:
        return [r.status for r in open_store(db).query(tool="sleepy")] if db.exists() else []

    async def cancelled() -> None:
        with anyio.fail_after(20):
            while statuses() != ["cancelled"]:
                await anyio.sleep(0.1)

    anyio.run(cancelled)
    assert post(server, INIT) == 200
