"""Rate limits when served: ``429`` + ``Retry-After`` over HTTP (the ASGI app in process, and a
real ``toolctl serve``), the ``rate_limited`` error result over stdio."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.auth.middleware.bearer_auth import AuthenticatedUser
from mcp.server.auth.provider import AccessToken

import toolctl
from toolctl.server.dispatch import Dispatch
from toolctl.server.ratelimits import RATE_CHARGED, RateLimits, principal_of
from toolctl.server.security import http_security

from .serve_helpers import INIT, INITIALIZED, RawServe, http_server, wire
from .test_calls import _elicit, dump, run_stdio

TOOLS = """\
toolctl: 1
tools:
  - name: twice
    description: At most two calls a minute per caller.
    handler: limited_handlers:echo
    limits: {callsPerMinute: 2}
  - name: free
    description: No limit.
    handler: limited_handlers:echo
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "limited.yaml").write_text(TOOLS)
    (tmp_path / "limited_handlers.py").write_text("def echo(args):\n    return args\n")
    (tmp_path / "toolctl.yaml").write_text("tools: tools.d\npythonPath: ['.']\n")
    return tmp_path


def _call(name: str, call_id: int = 7, **params: Any) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "id": call_id,
        "method": "tools/call",
        "params": {"name": name, "arguments": {}, **params},
    }


def _user(subject: str) -> AuthenticatedUser:
    token = AccessToken(
        token="t", client_id="app", scopes=["x"], subject=subject, claims={"iss": "https://idp"}
    )
    return AuthenticatedUser(token)


class Edge:
    """The dispatch step in front of an app that answers 200 and remembers each scope."""

    def __init__(self, project: Path) -> None:
        from toolctl.server.toolset import Selection, build_toolset

        registry = toolctl.load(project=project, packs=False)
        toolset = build_toolset(registry, Selection())
        self.seen: list[dict[str, Any]] = []
        limits = RateLimits(lambda: toolset)
        self.app = Dispatch(self._ok, http_security("127.0.0.1"), 1 << 20, limits=limits)

    async def _ok(self, scope: Any, receive: Any, send: Any) -> None:
        body = await receive()
        self.seen.append({**scope, "body": body["body"]})
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b""})

    def post(
        self, message: dict[str, Any], user: Any = None
    ) -> tuple[int, dict[bytes, bytes], bytes]:
        scope: dict[str, Any] = {"type": "http", "method": "POST", "path": "/mcp"}
        scope["headers"] = [(b"host", b"127.0.0.1:8000")]
        if user is not None:
            scope["user"] = user
        body = json.dumps(message).encode()
        out: list[dict[str, Any]] = []

        async def receive() -> dict[str, Any]:
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            out.append(message)

        anyio.run(self.app, scope, receive, send)
        return (
            out[0]["status"],
            dict(out[0]["headers"]),
            b"".join(m.get("body", b"") for m in out[1:]),
        )


def test_the_call_past_the_limit_gets_429_with_retry_after(project: Path) -> None:
    edge = Edge(project)
    assert [edge.post(_call("twice"))[0] for _ in range(2)] == [200, 200]
    status, headers, body = edge.post(_call("twice"))
    assert status == 429
    assert headers[b"retry-after"] == b"30"  # the next call frees up in 60/2 s
    answer = json.loads(body)
    assert answer["id"] == 7 and answer["error"]["data"]["code"] == "rate_limited"
    assert "twice allows 2 call(s) a minute per caller" in answer["error"]["message"]
    assert len(edge.seen) == 2  # the refused call never reached the MCP app
    # the allowed ones reach it marked, body intact: the call handler does not charge again
    assert all(s[RATE_CHARGED] is True for s in edge.seen)
    assert json.loads(edge.seen[0]["body"])["params"]["name"] == "twice"


def test_unlimited_tools_other_methods_and_follow_ups_pass_uncharged(project: Path) -> None:
    edge = Edge(project)
    for _ in range(5):
        assert edge.post(_call("free"))[0] == 200
    assert edge.post({"jsonrpc": "2.0", "id": 1, "method": "ping"})[0] == 200
    for _ in range(3):  # a follow-up continues a run its first call was charged for
        assert edge.post(_call("twice", requestState="opaque"))[0] == 200
    assert not any(s.get(RATE_CHARGED) for s in edge.seen)
    assert edge.post(_call("twice"))[0] == 200  # the bucket is still full


def test_each_authenticated_caller_has_its_own_bucket(project: Path) -> None:
    edge = Edge(project)
    alice, bob = _user("alice"), _user("bob")
    assert [edge.post(_call("twice"), alice)[0] for _ in range(3)] == [200, 200, 429]
    assert edge.post(_call("twice"), bob)[0] == 200
    assert edge.post(_call("twice"))[0] == 200  # unauthenticated: the shared local bucket
    found = principal_of({"user": alice})
    assert found is not None and (found.issuer, found.subject) == ("https://idp", "alice")
    assert principal_of({}) is None


def test_a_real_server_answers_429_and_retry_after(project: Path) -> None:
    import http.client

    with http_server(project) as server:
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
            "Host": f"127.0.0.1:{server.port}",
        }

        def post(body: dict[str, Any], **extra: str) -> tuple[int, dict[str, str], str]:
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            try:
                conn.request("POST", "/mcp", json.dumps(body), {**headers, **extra})
                response = conn.getresponse()
                got = {k.lower(): v for k, v in response.getheaders()}
                return response.status, got, response.read().decode()
            finally:
                conn.close()

        status, got, _ = post(INIT)
        assert status == 200
        session = {"mcp-session-id": got["mcp-session-id"], "mcp-protocol-version": "2025-11-25"}
        post(INITIALIZED, **session)
        answers = [post(_call("twice"), **session) for _ in range(3)]
        assert [a[0] for a in answers] == [200, 200, 429]
        assert '"isError":false' in answers[0][2].replace(" ", "")
        assert answers[2][1]["retry-after"] == "30"
        assert "rate limited: twice allows 2 call(s)" in answers[2][2]
    assert "Traceback" not in "".join(server.log)


def test_over_stdio_a_limited_call_is_a_rate_limited_error_result(project: Path) -> None:
    server = RawServe(project)
    server.send(wire(INIT, INITIALIZED, *(_call("twice", 10 + i) for i in range(3))))
    replies = [server.reply() for _ in range(4)]
    server.close()
    results = [r["result"] for r in replies[1:]]  # calls run concurrently: in any order
    assert sorted(r["isError"] for r in results) == [False, False, True]
    text = next(r for r in results if r["isError"])["content"][0]["text"]
    assert "rate limited: twice allows 2 call(s) a minute per caller" in text
    assert "retry in 30 s" in text


@pytest.mark.slow  # a toolctl serve subprocess (through run_stdio)
def test_conditional_approval_over_mcp_asks_only_when_the_condition_matches(
    project: Path,
) -> None:
    (project / "tools.d" / "pay.yaml").write_text(
        "toolctl: 1\nname: pay\ndescription: Pays; large amounts need approval.\n"
        "handler: limited_handlers:echo\n"
        "inputSchema: {type: object, properties: {amount: {type: number}}}\n"
        "requireApproval:\n  when: {properties: {input: {properties: "
        "{amount: {exclusiveMinimum: 100}}, required: [amount]}}}\n"
    )
    asked: list[Any] = []

    async def body(client: Any) -> Any:
        small = dump(await client.call_tool("pay", {"amount": 5}))
        seen_after_small = len(asked)
        large = dump(await client.call_tool("pay", {"amount": 500}))
        return small, seen_after_small, large

    small, seen_after_small, large = run_stdio(
        project, body, elicitation_callback=_elicit("accept", {}, asked)
    )
    assert small["isError"] is False and seen_after_small == 0  # ran without asking
    assert large["isError"] is False and len(asked) == 1  # asked, accepted, ran
    assert "500" in asked[0].message
