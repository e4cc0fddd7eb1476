"""The per-principal session share (``--max-sessions-per-principal``): one caller cannot hold
every session of ``--max-sessions``. Driven on the SDK's own session manager (its admission and
owner bookkeeping, transports not started) and on a real server."""

from __future__ import annotations

import http.client
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager

from toolctl.server.sessions import SessionLimits, bound_sessions, default_share, session_limits

from .serve_helpers import INIT, INITIALIZED, http_server

pytestmark = pytest.mark.timeout(120)


def _owner(subject: str | None, client: str = "app") -> dict[str, Any]:
    return {"client_id": client, "issuer": "https://idp", "subject": subject}


def in_loop(test: Any) -> Any:
    """Run ``test`` inside an event loop (the SDK's transports need one to be made)."""

    def run() -> None:
        async def body() -> None:
            test()

        anyio.run(body)

    run.__name__ = test.__name__
    return run


class Manager:
    """The SDK's session manager with ``bound_sessions`` applied; sessions open and idle or
    busy as a test says (what the transports' server tasks would do)."""

    def __init__(self, most: int, share: int) -> None:
        from mcp.server.lowlevel import Server

        self.sdk = StreamableHTTPSessionManager(Server("t"), max_sessions=most)
        bound_sessions(self.sdk, share)
        self.deadline = 0.0

    def open(self, owner: dict[str, Any] | None, *, busy: bool = False) -> str | None:
        transport = self.sdk._admit_session(owner)
        if transport is None:
            return None
        self.deadline += 1  # opened later: idle for less time
        transport.idle_scope = anyio.CancelScope(deadline=self.deadline)
        transport._requests_in_flight = 1 if busy else 0
        return str(transport.mcp_session_id)

    def alive(self, session: str | None) -> bool:
        return session in self.sdk._server_instances


def test_the_default_share_is_a_quarter_at_least_two() -> None:
    assert [default_share(n) for n in (1, 2, 3, 8, 10, 1000)] == [1, 2, 2, 2, 3, 250]
    assert SessionLimits(max_sessions=10, per_principal=50).share == 10  # never above the max
    assert session_limits({"maxSessionsPerPrincipal": 4}, 100, None).share == 4
    assert session_limits({"maxSessionsPerPrincipal": 4}, 100, None, 7).share == 7  # CLI wins


def test_a_bad_share_setting_is_a_clear_error() -> None:
    from toolctl.errors import ToolctlError

    with pytest.raises(ToolctlError, match=r"serve\.maxSessionsPerPrincipal must be a positive"):
        session_limits({"maxSessionsPerPrincipal": 0}, None, None)


@in_loop
def test_a_principal_at_its_share_reuses_its_own_idle_slot_not_others() -> None:
    m = Manager(most=10, share=2)
    alice = [m.open(_owner("alice")) for _ in range(2)]
    bob = m.open(_owner("bob"))
    third = m.open(_owner("alice"))  # at its share: its own longest-idle session goes
    assert third is not None
    assert not m.alive(alice[0]) and m.alive(alice[1]) and m.alive(bob)


@in_loop
def test_a_principal_with_every_session_busy_is_refused_while_others_get_in() -> None:
    m = Manager(most=10, share=2)
    for _ in range(2):
        assert m.open(_owner("mallory"), busy=True) is not None
    assert m.open(_owner("mallory")) is None  # 8 free slots, but not for mallory
    assert m.open(_owner("alice")) is not None
    assert m.open(_owner("mallory", client="other-app"), busy=True) is None  # same sub, iss
    assert m.open(_owner(None, client="robot")) is not None  # a subject-less machine client


@in_loop
def test_every_unauthenticated_session_counts_as_one_principal() -> None:
    m = Manager(most=10, share=2)
    assert m.open(None, busy=True) is not None
    assert m.open(None, busy=True) is not None
    assert m.open(None) is None
    assert m.open(_owner("alice")) is not None


@in_loop
def test_the_whole_server_still_expires_its_longest_idle_session_when_full() -> None:
    m = Manager(most=3, share=2)
    first = m.open(_owner("a"))
    m.open(_owner("b"))
    m.open(_owner("c"))
    assert m.open(_owner("d")) is not None and not m.alive(first)


def _headers(port: int, **extra: str) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Host": f"127.0.0.1:{port}",
        **extra,
    }


def _post(port: int, body: Any, **extra: str) -> tuple[int, str | None, str | None]:
    """(status, session id, Retry-After) of one POST /mcp."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request("POST", "/mcp", json.dumps(body), _headers(port, **extra))
        response = conn.getresponse()
        response.read()
        return (
            response.status,
            response.getheader("mcp-session-id"),
            response.getheader("retry-after"),
        )
    finally:
        conn.close()


def _busy_session(port: int) -> http.client.HTTPConnection:
    """A new session with its GET stream open (busy: it cannot be expired)."""
    status, session, _ = _post(port, INIT)
    assert status == 200 and session is not None
    in_session = {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}
    _post(port, INITIALIZED, **in_session)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    conn.request("GET", "/mcp", headers=_headers(port, Accept="text/event-stream", **in_session))
    assert conn.getresponse().status == 200
    return conn


def test_a_real_server_holds_unauthenticated_clients_to_the_share(tmp_path: Path) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "t.yaml").write_text("toolctl: 1\nname: t\ndescription: A tool.\n")
    (tmp_path / "toolctl.yaml").write_text("tools: tools.d\n")
    args = ("--max-sessions", "8", "--max-sessions-per-principal", "2")
    with http_server(tmp_path, *args) as server:
        # idle sessions of the one anonymous principal: each new one expires its oldest
        assert [_post(server.port, INIT)[0] for _ in range(4)] == [200] * 4
        streams = [_busy_session(server.port) for _ in range(2)]
        status, _, retry = _post(server.port, INIT)  # 8 slots, but 2 busy ones are its share
        assert (status, retry) == (503, "5")
        for conn in streams:
            conn.close()
    assert "Traceback" not in "".join(server.log)


def test_the_share_option_is_http_only_and_checked(tmp_path: Path) -> None:
    (tmp_path / "tools.d").mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "toolctl", "serve", "--max-sessions-per-principal", "2"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "--max-sessions-per-principal applies only to --transport http" in done.stderr
