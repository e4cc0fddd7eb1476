"""Draining a replica (issue 21, D3), in process: a new ``tools/call`` is refused in every
session while the rest of a session's traffic passes, and a call waiting on a background run
hands the run over instead of cancelling it when the replica stops.

The same behaviour across real replicas, workers and PostgreSQL is in
``tests/store/test_fleet_faults.py``.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any, cast

import anyio
import pytest

from tests.runtime.test_store import record
from toolctl.registry import Registry
from toolctl.runtime import RunResult, RunStatus
from toolctl.runtime.history.sqlite import SqliteStore, owner_fields
from toolctl.server import background
from toolctl.server.drain import Drain, read_body, refused_call
from toolctl.server.health import Lifecycle

CALL = {"jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {"name": "x"}}
ANSWER = {"jsonrpc": "2.0", "id": 3, "result": {"action": "accept", "content": {}}}
LISTING = {"jsonrpc": "2.0", "id": 8, "method": "tools/list"}


class _App:
    """The ASGI app behind the middleware: records the bodies it was given and answers 200."""

    def __init__(self) -> None:
        self.bodies: list[bytes] = []

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        self.bodies.append(body)
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"{}"})


def _post(lifecycle: Lifecycle, body: bytes, *, session: bool) -> tuple[int, dict[str, str]]:
    """POST ``body`` (in two chunks) through ``lifecycle``; the status and headers sent."""
    headers = [(b"content-type", b"application/json")]
    if session:
        headers.append((b"mcp-session-id", b"abc"))
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
    half = len(body) // 2
    chunks = [
        {"type": "http.request", "body": body[:half], "more_body": True},
        {"type": "http.request", "body": body[half:], "more_body": False},
    ]
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return chunks.pop(0) if chunks else {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    anyio.run(lifecycle, scope, receive, send)
    start = sent[0]
    return start["status"], {k.decode(): v.decode() for k, v in start.get("headers", [])}


def _lifecycle(draining: bool) -> tuple[Lifecycle, _App]:
    app = _App()
    return Lifecycle(app, lambda: None, drain_state=Drain(active=draining)), app


def test_a_draining_replica_refuses_a_new_call_in_an_existing_session() -> None:
    lifecycle, app = _lifecycle(draining=True)
    status, headers = _post(lifecycle, json.dumps(CALL).encode(), session=True)
    assert status == 503 and headers["retry-after"] == "1"
    assert app.bodies == []  # the session never saw the call: nothing started here
    assert lifecycle.inflight == 0


def test_a_call_inside_a_batch_is_refused_too() -> None:
    lifecycle, app = _lifecycle(draining=True)
    status, _ = _post(lifecycle, json.dumps([LISTING, CALL]).encode(), session=True)
    assert status == 503 and app.bodies == []


@pytest.mark.parametrize("message", [ANSWER, LISTING], ids=["elicitation-answer", "tools-list"])
def test_the_rest_of_a_session_passes_while_draining(message: dict[str, Any]) -> None:
    """An approval's answer for a call in flight must reach it: the call finishes here."""
    lifecycle, app = _lifecycle(draining=True)
    body = json.dumps(message).encode()
    status, _ = _post(lifecycle, body, session=True)
    assert status == 200
    assert app.bodies == [body]  # the body the middleware read is replayed whole


def test_a_new_session_is_refused_while_draining_and_all_passes_before() -> None:
    lifecycle, app = _lifecycle(draining=True)
    assert _post(lifecycle, json.dumps(CALL).encode(), session=False)[0] == 503
    lifecycle, app = _lifecycle(draining=False)
    body = json.dumps(CALL).encode()
    assert _post(lifecycle, body, session=True)[0] == 200
    assert app.bodies == [body]


def test_the_drain_flag_is_shared_with_the_server() -> None:
    """DrainingServer sets ``lifecycle.draining``; the call handler reads the same object."""
    state = Drain()
    lifecycle = Lifecycle(_App(), lambda: None, drain_state=state)
    lifecycle.draining = True
    assert state.active is True


def test_refused_call_reads_only_calls() -> None:
    assert refused_call(json.dumps(CALL).encode())
    assert refused_call(b'{"method": "tools\\/call", "id": 1}')  # escapes do not hide it
    assert not refused_call(json.dumps(ANSWER).encode())
    assert not refused_call(b"not json")
    assert not refused_call(b"[" * 100_000)  # too deep: left to the transport


def test_read_body_gives_up_past_the_limit_and_replays_what_it_read() -> None:
    chunks = [
        {"type": "http.request", "body": b"x" * 10, "more_body": True},
        {"type": "http.request", "body": b"y" * 10, "more_body": False},
    ]

    async def receive() -> dict[str, Any]:
        return chunks.pop(0)

    async def scenario() -> list[dict[str, Any]]:
        body, again = await read_body(receive, limit=5)
        assert body is None
        return [await again(), await again()]

    replayed = anyio.run(scenario)
    assert b"".join(m["body"] for m in replayed) == b"x" * 10 + b"y" * 10


# ---------------------------------------------------------------- waiting on a background run


def _store(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SqliteStore:
    store = SqliteStore(tmp_path / "s.db")
    # A run a worker on another machine holds (never a pid of this process: cancel signals it).
    away = {"owner_host": "elsewhere", "owner_pid": 1, "lease_expires": time.time() + 3600}
    store.insert(record("bg", background=True, **{**owner_fields("worker-1"), **away}))
    monkeypatch.setattr("toolctl.runtime.api.resolve_store", lambda registry: store)
    return store


def _started() -> RunResult:
    return RunResult(run_id="bg", tool="echo", status=RunStatus.RUNNING)


def test_a_draining_replica_hands_a_background_run_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path, monkeypatch)
    drain = Drain()

    async def scenario() -> RunResult:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_drain_soon, drain)
            return await background.wait_for_run(Registry({}), _started(), None, False, drain)  # type: ignore[arg-type]

    got = anyio.run(scenario)
    assert got.status is RunStatus.RUNNING and got.run_id == "bg"
    assert store.get("bg").status == "running"  # still the worker's


async def _drain_soon(drain: Drain) -> None:
    await anyio.sleep(0.2)
    drain.active = True


def test_a_replica_stopping_never_cancels_a_run_on_a_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cut off while draining (the server's deadline): the run is not the waiter's to cancel."""
    store = _store(tmp_path, monkeypatch)
    drain = Drain()
    monkeypatch.setattr(background, "POLL_MAX", 30.0)
    monkeypatch.setattr(background, "POLL_START", 30.0)  # asleep when the stop comes

    async def scenario() -> None:
        async with anyio.create_task_group() as tg:
            tg.start_soon(_drain_soon, drain)  # while the waiter sleeps between two reads
            with anyio.move_on_after(0.5):
                await background.wait_for_run(Registry({}), _started(), None, False, drain)  # type: ignore[arg-type]

    anyio.run(scenario)
    assert store.get("bg").status == "running"


def test_a_client_cancelling_its_call_still_cancels_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = _store(tmp_path, monkeypatch)

    async def scenario() -> None:
        with anyio.move_on_after(0.3):
            await background.wait_for_run(Registry({}), _started(), None, False, Drain())  # type: ignore[arg-type]

    anyio.run(scenario)
    assert store.get("bg").status == "cancelled"


def test_the_handed_over_result_says_how_to_get_the_run() -> None:
    from toolctl.server.results import call_result

    result = RunResult(run_id="r-1", tool="echo", status=RunStatus.RUNNING, started_at=time.time())
    out = call_result(result, cast(Any, None))  # a running result never reads the spec
    text = out["content"][0]["text"]
    assert out["isError"] is True and out["_meta"]["dev.toolctl/run"]["status"] == "running"
    assert "r-1" in text and "toolctl runs wait r-1" in text and "goes on" in text


def _probe(lifecycle: Lifecycle, path: str) -> tuple[int, bytes]:
    scope = {"type": "http", "method": "GET", "path": path, "headers": []}
    sent: list[dict[str, Any]] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        sent.append(message)

    anyio.run(lifecycle, scope, receive, send)
    return sent[0]["status"], sent[1]["body"]


def test_readiness_says_draining_with_404() -> None:
    """404, not 503: HAProxy's `http-check disable-on-404` then sends no new session here but
    keeps the sessions already here (docs/deploy/haproxy.cfg); 503 means the history is away."""
    lifecycle, _ = _lifecycle(draining=False)
    assert _probe(lifecycle, "/readyz") == (200, b"ready\n")
    lifecycle.draining = True
    assert _probe(lifecycle, "/readyz") == (404, b"draining\n")
    assert _probe(lifecycle, "/healthz") == (200, b"ok\n")  # alive all the same
