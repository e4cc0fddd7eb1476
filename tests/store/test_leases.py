"""Foreground runs on a PostgreSQL history hold a short lease renewed by the process's heartbeat,
so a replica that dies mid-call has its runs marked ``interrupted`` by a sweep on another host
once the lease ends — not a day later — while a live long call is never taken away.

"Another host" is the sweeping process with :data:`toolctl.runtime.history.ownership.HOST` changed:
an
owner whose host differs from the sweeper's can be judged only by its lease.
"""

from __future__ import annotations

import asyncio
import os
import signal
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

import toolctl
from tests.runtime_helpers import own_runtime
from tests.store.fleet import call_tool, replica
from toolctl.registry import Registry
from toolctl.runtime.history import heartbeat, ownership
from toolctl.runtime.history.memory import MemoryStore
from toolctl.runtime.history.ownership import interrupt_changes
from toolctl.runtime.history.postgres import PostgresStore
from toolctl.runtime.history.records import RunRecord
from toolctl.runtime.history.sqlite import SqliteStore
from toolctl.runtime.resources import Runtime

HANDLERS = textwrap.dedent("""
    import os, time

    def work(input, ctx):
        with open(os.path.join(os.environ["MARKS"], input["id"]), "a") as fh:
            fh.write(f"{os.getpid()}\\n")
        aborted = ctx.abort.wait(input.get("seconds", 0))
        return {"id": input["id"], "aborted": aborted}
""")

TOOLS = textwrap.dedent("""
    toolctl: 1
    tools:
      - name: work
        description: Work for a while (no timeout), or until aborted.
        handler: lease_handlers:work
        inputSchema:
          type: object
          properties: {id: {type: string}, seconds: {type: number}}
          required: [id]
""")

SHORT_LEASE = 1.2  # seconds: renewed every 0.4 s


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "tools.d").mkdir(parents=True)
    (root / "marks").mkdir()
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [.]\n")
    (root / "lease_handlers.py").write_text(HANDLERS)
    (root / "tools.d" / "tools.yaml").write_text(TOOLS)
    monkeypatch.setenv("MARKS", str(root / "marks"))
    return root


@pytest.fixture
def registry(project: Path) -> Registry:
    return toolctl.load(project=project)


@pytest.fixture
def short_lease(store: PostgresStore) -> Iterator[None]:
    """This process's calls take a :data:`SHORT_LEASE` (as ``TOOLCTL_LEASE`` would set)."""
    with own_runtime(lease=SHORT_LEASE):
        yield
        _stop_idle_heartbeat(store)


@pytest.fixture
def rt() -> Iterator[Runtime]:
    """A runtime of the test's own: its heartbeat counts the renewing thread's starts."""
    with own_runtime() as runtime:
        yield runtime


def _stop_idle_heartbeat(store: PostgresStore) -> None:
    """Stop the heartbeat now, as closing ``store`` would (else it stops at its next renewal
    time with no run held)."""
    heartbeat.stop_renewing(store)
    _wait_for(lambda: not heartbeat.running(), "the heartbeat to stop")
    _wait_for(_no_heartbeat_thread, "the heartbeat thread to end")


@pytest.fixture
def store(pg_url: str) -> Iterator[PostgresStore]:
    opened = PostgresStore(pg_url)
    yield opened
    opened.close()


def _wait_for(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)


def _running(store: PostgresStore) -> RunRecord | None:
    found = store.query(status="running", limit=2)
    assert len(found) <= 1
    return found[0] if found else None


def _as_another_host(monkeypatch: pytest.MonkeyPatch) -> None:
    """From now on this process sweeps as if on another machine (owners judged by lease)."""
    monkeypatch.setattr(ownership, "HOST", "another-host")


def test_a_call_killed_with_its_replica_is_interrupted_once_its_lease_ends(
    project: Path, pg_url: str, store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    lease = 1.5
    with replica(project, pg_url, environ={"TOOLCTL_LEASE": str(lease)}) as server:

        async def start_call() -> None:
            call = asyncio.create_task(call_tool(server.url, "work", {"id": "k1", "seconds": 600}))
            await asyncio.to_thread(_wait_for, lambda: _running(store) is not None, "a run")
            os.killpg(server.proc.pid, signal.SIGKILL)
            try:
                answer = await asyncio.wait_for(call, 30)
            except Exception:  # the replica died: the call fails visibly
                return
            raise AssertionError(f"a call on a killed replica answered: {answer}")

        asyncio.run(start_call())
        killed_at = time.time()
        server.proc.wait(10)
    rec = _running(store)
    assert rec is not None and rec.lease_expires is not None
    assert rec.lease_expires <= killed_at + lease + 1.0  # a short lease, not a day
    _as_another_host(monkeypatch)
    swept: list[str] = []
    while not swept:
        swept = store.sweep()
        if not swept:
            assert time.time() < rec.lease_expires + 10, "the run stayed running past its lease"
            time.sleep(0.1)
    assert time.time() >= rec.lease_expires  # never taken while its lease held
    row = store.get(rec.run_id)
    assert (row.status, row.error["code"] if row.error else None) == ("interrupted", "interrupted")


def test_the_lease_is_renewed_while_a_long_handler_runs(
    registry: Registry,
    store: PostgresStore,
    short_lease: None,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    results: list[Any] = []
    call = threading.Thread(
        target=lambda: results.append(
            registry.call("work", {"id": "r1", "seconds": 5 * SHORT_LEASE}, store=store)
        )
    )
    call.start()
    try:
        _wait_for(lambda: _running(store) is not None, "the running row")
        _as_another_host(monkeypatch)
        first = _running(store)
        assert first is not None and first.lease_expires is not None
        assert first.lease_expires <= time.time() + SHORT_LEASE + 0.1
        leases = {first.lease_expires}
        while call.is_alive():
            assert store.sweep() == []  # a live call's run is never taken from another host
            now = _running(store)
            if now is not None:
                assert now.lease_expires is not None
                leases.add(now.lease_expires)
            time.sleep(SHORT_LEASE / 4)
    finally:
        call.join(30)
    (result,) = results
    assert result.ok and result.output == {"id": "r1", "aborted": False}
    assert len(leases) >= 4  # renewed over and over while the handler ran
    assert store.get(result.run_id).status == "succeeded"


def test_a_run_taken_away_is_aborted_like_a_workers(
    registry: Registry, store: PostgresStore, pg_url: str, short_lease: None
) -> None:
    """A renewal that finds the row no longer ours (here: marked interrupted by a sweep that
    judged it lost) aborts the handler, and the other writer's state stands."""
    results: list[Any] = []
    call = threading.Thread(
        target=lambda: results.append(
            registry.call("work", {"id": "t1", "seconds": 60}, store=store)
        )
    )
    call.start()
    _wait_for(lambda: _running(store) is not None, "the running row")
    rec = _running(store)
    assert rec is not None
    other = PostgresStore(pg_url, sweep=False)
    try:
        assert other.update(
            rec.run_id,
            expect_status="running",
            expect_owner=rec.owner,
            **interrupt_changes(time.time()),
        )
    finally:
        other.close()
    call.join(10)  # the heartbeat aborts the 60 s handler within a renewal period
    assert not call.is_alive()
    (result,) = results
    assert result.status.value == "interrupted"
    assert any("already interrupted" in note for note in result.notes)
    assert store.get(rec.run_id).status == "interrupted"


def _no_heartbeat_thread() -> bool:
    return not any(t.name == "toolctl-heartbeat" for t in threading.enumerate())


def test_fast_calls_start_no_heartbeat_thread(
    registry: Registry,
    store: PostgresStore,
    tmp_path: Path,
    rt: Runtime,
) -> None:
    _stop_idle_heartbeat(store)

    async def calls() -> list[Any]:  # as a server runs them: on an event loop that stays free
        return [await registry.acall("work", {"id": f"a{i}"}, store=store) for i in range(20)]

    done = asyncio.run(calls())
    assert all(r.ok for r in done)
    assert rt.heartbeat.starts == 0 and _no_heartbeat_thread()
    # The lease written is the short one, renewed only by a thread that never had to start.
    assert store.get(done[0].run_id).lease_expires <= time.time() + heartbeat.foreground_lease()

    sqlite = SqliteStore(tmp_path / "state.db")  # one machine: owners judged by pid
    try:
        assert all(registry.call("work", {"id": f"s{i}"}, store=sqlite).ok for i in range(20))
    finally:
        sqlite.close()
    assert rt.heartbeat.starts == 0 and _no_heartbeat_thread()


def test_synchronous_calls_share_one_heartbeat_thread(
    registry: Registry, store: PostgresStore, rt: Runtime
) -> None:
    """The synchronous API's handler may block its thread, so the heartbeat starts with its first
    run on a shared store; it outlives that run, so a stream of calls starts it once."""
    _stop_idle_heartbeat(store)
    try:
        assert all(registry.call("work", {"id": f"c{i}"}, store=store).ok for i in range(30))
        assert rt.heartbeat.starts == 1 and rt.heartbeat.renewed_first == 0
    finally:
        _stop_idle_heartbeat(store)


def test_toolctl_lease_sets_the_foreground_lease(monkeypatch: pytest.MonkeyPatch) -> None:
    for raw, expected in [("2.5", 2.5), ("", ownership.LEASE_S), ("soon", ownership.LEASE_S)]:
        monkeypatch.setenv(ownership.LEASE_ENV, raw)
        assert Runtime().heartbeat.foreground_lease() == expected  # read by each new runtime
    # A one-machine store's lease is never renewed: it covers the whole run.
    assert heartbeat.lease_for(MemoryStore(), 30.0) == 30.0 + ownership.TIMEOUT_MARGIN_S
    assert heartbeat.lease_for(MemoryStore(), None) == ownership.DEFAULT_LEASE_S


@pytest.mark.parametrize("raw", ["soon", "-5", "0", "inf", "nan"])
def test_an_unusable_toolctl_lease_is_reported_not_silently_replaced(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture, raw: str
) -> None:
    # an infinite lease would also stop the heartbeat thread (a wait that long overflows)
    monkeypatch.setenv(ownership.LEASE_ENV, raw)
    with caplog.at_level("WARNING", logger="toolctl.runtime"):
        assert Runtime().heartbeat.foreground_lease() == ownership.LEASE_S
    assert f"TOOLCTL_LEASE={raw!r} is not a positive number of seconds" in caplog.text
