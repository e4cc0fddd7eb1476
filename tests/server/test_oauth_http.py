"""``toolctl serve --transport http`` with ``auth:``, over real HTTP (issue 22).

One server process trusts a small issuer served on loopback (tests/server/oauth_helpers.py),
which mints tokens for two principals, alice and bob. Checked on the wire: the RFC 9728
metadata and the 401 challenge, bad tokens (401 ``invalid_token``), ``tools/list`` per scope,
403 ``insufficient_scope`` naming the scopes, per-principal tasks and sessions, and a server
whose JWKS cannot be reached (503, ``/readyz`` says why).
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx2
import pytest

from tests.server.oauth_helpers import Issuer, ec_key, serve_issuer
from tests.server.serve_helpers import HttpServer, copy_registry, http_server

pytestmark = pytest.mark.xdist_group("oauth-http")
REGISTRIES: dict[str, Path] = {}  # server URL -> its registry (the server's working directory)

OLD, MODERN = "2025-11-25", "2026-07-28"
SCOPED_TOOLS = """toolctl: 1
tools:
  - name: read_notes
    description: Read the notes (needs files:read).
    handler: servetools:shout
    scopes: [files:read]
    inputSchema:
      type: object
      properties: {text: {type: string}}
  - name: write_notes
    description: Write the notes (needs files:write).
    handler: servetools:shout
    scopes: [files:write]
    inputSchema:
      type: object
      properties: {text: {type: string}}
"""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port: int = probe.getsockname()[1]
        return port


def oauth_registry(root: Path, issuer: str, audience: str, **auth: Any) -> Path:
    """A copy of the test registry with two scoped tools and an ``auth:`` section."""
    registry = copy_registry(root)
    (registry / "tools.d" / "scoped.yaml").write_text(SCOPED_TOOLS)
    section = {"issuer": issuer, "audience": audience, "scopes": ["toolctl.call"], **auth}
    with (registry / "toolctl.yaml").open("a") as config:
        config.write(f"auth: {json.dumps(section)}\n")
    return registry


class Wire:
    """Raw JSON-RPC over HTTP with a bearer token."""

    def __init__(self, url: str, token: str | None) -> None:
        self.url, self.token = url, token
        self.session: str | None = None

    def post(self, message: dict[str, Any], version: str = OLD) -> httpx2.Response:
        headers = {
            "content-type": "application/json",
            "accept": "application/json, text/event-stream",
            "mcp-protocol-version": version,
        }
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        if self.session:
            headers["mcp-session-id"] = self.session
        if version == MODERN:
            headers["mcp-method"] = message["method"]
            params = message.setdefault("params", {})
            params.setdefault("_meta", {}).update(
                {
                    "io.modelcontextprotocol/protocolVersion": MODERN,
                    "io.modelcontextprotocol/clientCapabilities": {
                        "extensions": {"io.modelcontextprotocol/tasks": {}}
                    },
                    "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                }
            )
            if "name" in params:
                headers["mcp-name"] = params["name"]
            if "taskId" in params:
                headers["mcp-name"] = params["taskId"]
        return httpx2.post(self.url, json=message, headers=headers, timeout=60)

    def open(self) -> None:
        init = {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {
                "protocolVersion": OLD,
                "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"},
            },
        }
        answer = self.post(init)
        assert answer.status_code == 200, answer.text
        self.session = answer.headers["mcp-session-id"]
        self.post({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def call(self, method: str, params: dict[str, Any], version: str = OLD) -> dict[str, Any]:
        answer = self.post({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}, version)
        assert answer.status_code == 200, (answer.status_code, answer.text)
        text = answer.text
        if text.startswith("{"):
            reply: dict[str, Any] = json.loads(text)
            return reply
        data = [line[5:] for line in text.splitlines() if line.startswith("data:")]
        reply = json.loads(data[-1])
        return reply


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Issuer, HttpServer]]:
    issuer = Issuer()
    with serve_issuer(issuer) as base:
        port = free_port()
        audience = f"http://127.0.0.1:{port}/mcp"
        issuer.audience = audience
        registry = oauth_registry(tmp_path_factory.mktemp("oauth"), base, audience)
        with http_server(registry, "--port", str(port)) as server:
            REGISTRIES[server.url] = registry
            yield issuer, server


def test_metadata_needs_no_token_and_names_the_issuer(served: tuple[Issuer, HttpServer]) -> None:
    issuer, server = served
    base = server.url.rsplit("/mcp", 1)[0]
    for path in (
        "/.well-known/oauth-protected-resource/mcp",
        "/.well-known/oauth-protected-resource",
    ):
        answer = httpx2.get(base + path)
        assert answer.status_code == 200
        assert answer.json() == {
            "resource": issuer.audience,
            "authorization_servers": [issuer.issuer],
            "scopes_supported": ["files:read", "files:write", "toolctl.call"],
            "bearer_methods_supported": ["header"],
            "resource_name": "toolctl MCP server",
        }


def test_no_token_is_a_401_pointing_at_the_metadata(served: tuple[Issuer, HttpServer]) -> None:
    _, server = served
    answer = Wire(server.url, None).post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert answer.status_code == 401
    base = server.url.rsplit("/mcp", 1)[0]
    assert answer.headers["www-authenticate"] == (
        f'Bearer resource_metadata="{base}/.well-known/oauth-protected-resource/mcp", '
        'scope="toolctl.call"'
    )


@pytest.mark.parametrize(
    "bad",
    ["wrong-audience", "wrong-issuer", "expired", "not-yet-valid", "another-key", "alg-none"],
)
def test_a_bad_token_is_a_401_invalid_token(served: tuple[Issuer, HttpServer], bad: str) -> None:
    issuer, server = served
    now = int(time.time())
    token = {
        "wrong-audience": lambda: issuer.token(aud="https://other.example.com/mcp"),
        "wrong-issuer": lambda: issuer.token(iss="https://evil.example.com"),
        "expired": lambda: issuer.token(exp=now - 300),
        "not-yet-valid": lambda: issuer.token(nbf=now + 300),
        "another-key": lambda: issuer.token(key=ec_key()),
        "alg-none": lambda: "eyJhbGciOiJub25lIn0." + issuer.token().split(".")[1] + ".",
    }[bad]()
    answer = Wire(server.url, token).post({"jsonrpc": "2.0", "id": 1, "method": "ping"})
    assert answer.status_code == 401
    assert 'error="invalid_token"' in answer.headers["www-authenticate"]
    assert "resource_metadata=" in answer.headers["www-authenticate"]


def test_a_token_without_the_servers_scopes_is_a_403(served: tuple[Issuer, HttpServer]) -> None:
    issuer, server = served
    answer = Wire(server.url, issuer.token(scope="files:read")).post(
        {"jsonrpc": "2.0", "id": 1, "method": "ping"}
    )
    assert answer.status_code == 403
    assert 'error="insufficient_scope", scope="toolctl.call"' in answer.headers["www-authenticate"]


@pytest.mark.parametrize("version", [OLD, MODERN])
def test_tools_list_shows_the_tools_the_token_allows(
    served: tuple[Issuer, HttpServer], version: str
) -> None:
    issuer, server = served

    def listed(scope: str) -> set[str]:
        wire = Wire(server.url, issuer.token(scope=scope))
        if version == OLD:
            wire.open()
        reply = wire.call("tools/list", {}, version)
        return {t["name"] for t in reply["result"]["tools"]}

    basic = listed("toolctl.call")
    assert "shout" in basic and not basic & {"read_notes", "write_notes"}
    assert listed("toolctl.call files:read") == basic | {"read_notes"}
    assert listed("toolctl.call files:read files:write") == basic | {"read_notes", "write_notes"}


@pytest.mark.parametrize("version", [OLD, MODERN])
def test_calling_a_tool_without_its_scopes_is_a_403_naming_them(
    served: tuple[Issuer, HttpServer], version: str
) -> None:
    issuer, server = served
    wire = Wire(server.url, issuer.token(scope="toolctl.call files:read"))
    if version == OLD:
        wire.open()
    call = {"name": "write_notes", "arguments": {"text": "x"}}
    answer = wire.post({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": call}, version)
    assert answer.status_code == 403
    challenge = answer.headers["www-authenticate"]
    assert 'error="insufficient_scope", scope="toolctl.call files:write"' in challenge
    reply = wire.call("tools/call", {"name": "read_notes", "arguments": {"text": "x"}}, version)
    assert reply["result"]["content"][0]["text"] == "X"


def test_each_principal_sees_and_acts_on_its_own_tasks_only(
    served: tuple[Issuer, HttpServer],
) -> None:
    issuer, server = served
    alice, bob = Wire(server.url, issuer.token("alice")), Wire(server.url, issuer.token("bob"))
    for wire in (alice, bob):
        wire.open()
    started = alice.call(
        "tools/call", {"name": "chores", "arguments": {"seconds": 0}, "task": {"ttl": 60000}}
    )
    task_id = started["result"]["task"]["taskId"]
    assert [t["taskId"] for t in alice.call("tasks/list", {})["result"]["tasks"]] == [task_id]
    assert bob.call("tasks/list", {})["result"]["tasks"] == []
    for method in ("tasks/get", "tasks/result", "tasks/cancel"):
        refused = bob.call(method, {"taskId": task_id})
        assert "not found" in refused["error"]["message"], method
    assert alice.call("tasks/get", {"taskId": task_id})["result"]["taskId"] == task_id


def test_a_session_belongs_to_the_principal_that_opened_it(
    served: tuple[Issuer, HttpServer],
) -> None:
    issuer, server = served
    alice = Wire(server.url, issuer.token("alice"))
    alice.open()
    thief = Wire(server.url, issuer.token("bob"))
    thief.session = alice.session  # a leaked session id
    answer = thief.post({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    assert answer.status_code == 404
    assert alice.call("tools/list", {})["result"]["tools"]  # still alice's


def test_the_history_records_the_principal(served: tuple[Issuer, HttpServer]) -> None:
    issuer, server = served
    wire = Wire(server.url, issuer.token("carol", client_id="carols-app"))
    wire.open()
    wire.call("tools/call", {"name": "shout", "arguments": {"text": "hey"}})
    done = subprocess.run(
        [sys.executable, "-m", "toolctl", "runs", "list", "--principal", "carol", "-f", "json"],
        cwd=REGISTRIES[server.url],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert [r["principal"] for r in json.loads(done.stdout)] == [
        {"iss": issuer.issuer, "sub": "carol", "client_id": "carols-app"}
    ]


def test_an_unreachable_jwks_fails_closed_and_readyz_says_why(tmp_path: Path) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there
    port = free_port()
    audience = f"http://127.0.0.1:{port}/mcp"
    registry = oauth_registry(tmp_path, dead, audience, jwksUri=f"{dead}/jwks")
    issuer = Issuer(issuer=dead, audience=audience)
    with http_server(registry, "--port", str(port)) as server:
        base = server.url.rsplit("/mcp", 1)[0]
        ready = httpx2.get(base + "/readyz")
        assert ready.status_code == 503
        assert ready.text.startswith("not ready: cannot check access tokens: cannot reach")
        answer = Wire(server.url, issuer.token()).post(
            {"jsonrpc": "2.0", "id": 1, "method": "ping"}
        )
        assert answer.status_code == 503
        assert answer.json()["error"] == "temporarily_unavailable"
