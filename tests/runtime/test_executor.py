"""The handler pool and the recording of calls made from async code (issue 7, reliability §2.4
cases 44 and 47, §2.5 case 58): workers are reused, stuck calls saturate the pool and new
calls are refused at once, a stuck handler never holds up process exit, and every call has its
row in the run history."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.runtime_helpers import own_runtime
from toolctl.registry import Registry
from toolctl.runtime import RunStatus, api
from toolctl.runtime.execution import invoke
from toolctl.runtime.history.sqlite import SqliteStore
from toolctl.runtime.resources import current

from .conftest import FIXTURES

TOOLS = {
    "exec.yaml": """\
toolctl: 1
tools:
  - name: gated
    description: Wait for the test's gate.
    handler: rt_handlers:gated
    inputSchema: {type: object, properties: {max: {type: number}}}
  - name: gated_ro
    description: Wait for the test's gate (declared read-only).
    handler: rt_handlers:gated
    inputSchema: {type: object, properties: {max: {type: number}}}
    mcp: {annotations: {readOnlyHint: true}}
  - name: add_ro
    description: Add two numbers (declared read-only).
    handler: rt_handlers:add
    inputSchema:
      type: object
      properties: {a: {type: number}, b: {type: number}}
      required: [a, b]
    mcp: {annotations: {readOnlyHint: true}}
"""
}


@pytest.fixture
def ereg(make_registry: Callable[[dict[str, str]], Registry]) -> Registry:
    return make_registry(TOOLS)


@pytest.fixture
def gate() -> Iterator[threading.Event]:
    import rt_handlers

    rt_handlers.GATE.clear()
    yield rt_handlers.GATE
    rt_handlers.GATE.set()  # release whatever a failed test left blocked
    _wait_until(lambda: invoke.busy_workers() == 0)


def _wait_until(done: Callable[[], bool], limit: float = 20.0) -> None:
    deadline = time.monotonic() + limit
    while not done():
        assert time.monotonic() < deadline, "condition not reached"
        time.sleep(0.01)


def test_workers_are_reused_across_calls(ereg: Registry) -> None:
    async def many() -> list[RunStatus]:
        return [(await ereg.acall("add", {"a": i, "b": 1})).status for i in range(50)]

    before = threading.active_count()
    assert set(asyncio.run(many())) == {RunStatus.SUCCEEDED}
    # Fifty sequential calls, at most a thread or two more (the pool worker, the history writer).
    assert threading.active_count() <= before + 2


@pytest.mark.timeout(60)
def test_stuck_calls_saturate_the_pool_and_new_calls_fail_fast(
    ereg: Registry, gate: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    with own_runtime(handler_threads=2):
        _saturate_two_workers(ereg, gate)


def _saturate_two_workers(ereg: Registry, gate: threading.Event) -> None:
    async def scenario() -> list[object]:
        stuck = await asyncio.gather(
            ereg.acall("gated", {}, timeout=0.05), ereg.acall("gated", {}, timeout=0.05)
        )
        refused = await ereg.acall("add", {"a": 1, "b": 2})
        return [*stuck, refused]

    first, second, refused = asyncio.run(scenario())
    for result in (first, second):
        assert result.status is RunStatus.TIMED_OUT  # type: ignore[attr-defined]
        assert any("may still be running" in n for n in result.notes)  # type: ignore[attr-defined]
    assert refused.status is RunStatus.FAILED  # type: ignore[attr-defined]
    assert "executor saturated" in refused.error.message  # type: ignore[attr-defined]
    assert "limit 2" in refused.error.message  # type: ignore[attr-defined]
    # The refused call is in the history too.
    assert api.resolve_store(ereg).get(refused.run_id).status == "failed"  # type: ignore[attr-defined]
    # Once the stuck handlers return, their workers serve new calls again.
    gate.set()
    _wait_until(lambda: invoke.busy_workers() == 0)
    assert ereg.call("add", {"a": 1, "b": 2}, timeout=5).status is RunStatus.SUCCEEDED


STUCK_AT_EXIT = """
import asyncio, sys, toolctl
sys.path.insert(0, {fixtures!r})
reg = toolctl.load()
print(reg.call("gated", {{"max": 600}}, timeout=0.1).status.value, flush=True)
print(asyncio.run(reg.acall("gated", {{"max": 600}}, timeout=0.1)).status.value, flush=True)
"""


@pytest.mark.timeout(60)
def test_a_stuck_handler_never_blocks_process_exit(ereg: Registry, project: Path) -> None:
    # The process must end by itself: the handlers would wait 600 s (a hang fails the timeout).
    done = subprocess.run(
        [sys.executable, "-c", STUCK_AT_EXIT.format(fixtures=str(FIXTURES))],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=45,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["timed_out", "timed_out"]


def test_a_quick_read_only_call_is_recorded_when_it_ends(ereg: Registry) -> None:
    result = asyncio.run(ereg.acall("add_ro", {"a": 1, "b": 2}))
    rec = api.resolve_store(ereg).get(result.run_id)
    assert rec.status == "succeeded" and rec.output == {"sum": 3}
    assert rec.started_at is not None and rec.owner is None


def _counted_writes(store: Any, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the store's writes ("insert", "update"), in order, as they happen."""
    writes: list[str] = []
    insert, update = store.insert, store.update
    monkeypatch.setattr(
        store, "insert", lambda *a, **k: (writes.append("insert"), insert(*a, **k))[1]
    )
    monkeypatch.setattr(
        store, "update", lambda *a, **k: (writes.append("update"), update(*a, **k))[1]
    )
    return writes


@pytest.mark.parametrize("timeout", [None, 5])
def test_a_quick_read_only_sync_call_is_written_once(
    ereg: Registry, monkeypatch: pytest.MonkeyPatch, timeout: float | None
) -> None:
    # With a timeout its handler runs on a worker thread; without one, in place on the calling
    # thread (where no loop timer could fire: the timer thread writes a late running row).
    # The same one-write rule either way, and two writes for a tool not declared read-only.
    store = api.resolve_store(ereg)
    writes = _counted_writes(store, monkeypatch)
    result = ereg.call("add_ro", {"a": 1, "b": 2}, timeout=timeout)
    assert result.status is RunStatus.SUCCEEDED and writes == ["insert"]
    assert store.get(result.run_id).started_at is not None
    writes.clear()
    assert ereg.call("add", {"a": 1, "b": 2}, timeout=timeout).ok
    assert writes == ["insert", "update"]


def test_a_read_only_call_whose_loop_is_busy_when_it_returns_is_written_once(
    ereg: Registry, gate: threading.Event, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The handler returns well within the grace period, but the loop resumes the call only
    # after it (busy with other calls' work): the running row is for a handler that runs long.
    from toolctl.runtime.pipeline import call

    monkeypatch.setattr(call, "RUNNING_ROW_GRACE_S", 0.1)
    store = api.resolve_store(ereg)
    writes = _counted_writes(store, monkeypatch)

    async def scenario() -> Any:
        task = asyncio.ensure_future(ereg.acall("gated_ro", {}))
        while invoke.busy_workers() == 0:  # the handler runs on a worker: the grace has begun
            await asyncio.sleep(0.001)
        gate.set()
        time.sleep(0.3)  # the loop busy past the grace period; the handler returned meanwhile
        return await task

    result = asyncio.run(scenario())
    assert result.status is RunStatus.SUCCEEDED and writes == ["insert"]
    assert store.get(result.run_id).started_at is not None


@pytest.mark.timeout(60)
def test_a_long_read_only_sync_call_shows_as_running_then_ends(
    ereg: Registry, gate: threading.Event
) -> None:
    # The handler runs in place on the calling thread: the row appears while it still runs.
    store = api.resolve_store(ereg)
    results: list[Any] = []
    caller = threading.Thread(target=lambda: results.append(ereg.call("gated_ro", {})))
    caller.start()
    _wait_until(lambda: bool(store.query(tool="gated_ro", status="running")))
    gate.set()
    caller.join(30)
    (result,) = results
    rec = store.get(result.run_id)
    assert rec.status == "succeeded" and rec.output == {"opened": True} and rec.owner is None


def test_every_concurrent_call_has_its_row(ereg: Registry) -> None:
    async def burst() -> list[object]:
        calls = [ereg.acall("add_ro" if i % 2 else "add", {"a": i, "b": 1}) for i in range(40)]
        return list(await asyncio.gather(*calls))

    results = asyncio.run(burst())
    store = api.resolve_store(ereg)
    for result in results:
        rec = store.get(result.run_id)  # type: ignore[attr-defined]
        assert rec.status == "succeeded" and rec.owner is None
        assert rec.started_at is not None and rec.ended_at is not None
        assert rec.input is not None


@pytest.mark.timeout(60)
def test_a_long_read_only_call_shows_as_running_then_ends(
    ereg: Registry, gate: threading.Event
) -> None:
    store = api.resolve_store(ereg)

    async def scenario() -> object:
        task = asyncio.ensure_future(ereg.acall("gated_ro", {}))
        # Past the grace period the row is written while the handler still runs.
        while not store.query(tool="gated_ro", status="running"):
            await asyncio.sleep(0.01)
        gate.set()
        return await task

    result = asyncio.run(scenario())
    rec = store.get(result.run_id)  # type: ignore[attr-defined]
    assert rec.status == "succeeded" and rec.output == {"opened": True}


KILLED_MID_CALL = """
import asyncio, os, signal, sys, threading, time, toolctl
from toolctl.runtime import api
sys.path.insert(0, {fixtures!r})
reg = toolctl.load()
store = api.resolve_store(reg)
def kill_once_running():
    while not store.query(status="running"):
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGKILL)
threading.Thread(target=kill_once_running, daemon=True).start()
if {mode!r} == "sync":  # the handler runs in place on this thread
    reg.call({tool!r}, {{"max": 600}})
else:
    asyncio.run(reg.acall({tool!r}, {{"max": 600}}))
"""


@pytest.mark.timeout(60)
@pytest.mark.parametrize("mode", ["sync", "async"])
@pytest.mark.parametrize("tool", ["gated", "gated_ro"])
def test_a_process_killed_mid_call_leaves_an_interrupted_run(
    ereg: Registry, project: Path, tool: str, mode: str
) -> None:
    script = KILLED_MID_CALL.format(fixtures=str(FIXTURES), tool=tool, mode=mode)
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=project, capture_output=True, text=True, timeout=45
    )
    assert done.returncode == -9, done.stderr
    store = SqliteStore(project / ".toolctl" / "state.db")  # opening sweeps dead owners
    try:
        (rec,) = store.query(tool=tool)
        assert rec.status == "interrupted" and rec.error is not None
        assert rec.error["code"] == "interrupted"
    finally:
        store.close()


@pytest.mark.timeout(60)
def test_a_call_cancelled_while_its_running_row_is_written_is_recorded_cancelled(
    ereg: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:

    store = api.resolve_store(ereg)
    entered, release = threading.Event(), threading.Event()
    insert = store.insert

    def slow_insert(record: Any, **kw: Any) -> None:
        entered.set()
        release.wait(30)
        insert(record, **kw)

    monkeypatch.setattr(store, "insert", slow_insert)
    # as if other calls were in flight: the writer thread writes
    monkeypatch.setattr(current().history, "active", 5)

    async def scenario() -> str:
        task = asyncio.ensure_future(ereg.acall("gated", {"max": 0}))
        while not entered.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        return ""

    asyncio.run(scenario())
    _wait_until(lambda: bool(store.query(tool="gated", status="cancelled")))
    assert not store.query(tool="gated", status="running")
