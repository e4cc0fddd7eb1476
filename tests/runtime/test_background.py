"""Background runs in a detached worker."""

from __future__ import annotations

import os
import signal
import time

import pytest

from toolctl.registry import Registry
from toolctl.runtime import RunStatus, api
from toolctl.runtime.history import runs

pytestmark = pytest.mark.timeout(60)


def test_background_tool_returns_at_once_and_finishes_in_a_worker(reg: Registry) -> None:
    started = reg.call("bg", {"s": 0.2})
    assert started.status is RunStatus.RUNNING and started.output is None
    store = api.resolve_store(reg)
    rec = store.get(started.run_id)
    assert rec.background and rec.owner_pid != os.getpid()
    done = runs.wait(store, started.run_id, timeout=30)
    assert done.status == "succeeded" and done.output == {"slept": 0.2}
    assert done.raw_input is None
    from toolctl.runtime.execution.background import log_path

    log = log_path(store.path, started.run_id)
    for _ in range(100):  # the worker removes its log as it exits, just after the row is final
        if not log.exists():
            break
        time.sleep(0.05)
    assert not log.exists()


def test_a_worker_that_cannot_load_the_registry_records_why(reg: Registry) -> None:
    from toolctl.runtime.execution import background
    from toolctl.runtime.history.sqlite import RunRecord, owner_fields
    from toolctl.runtime.pipeline.call import new_run_id

    store = api.resolve_store(reg)
    run_id = new_run_id()
    rec = RunRecord(
        run_id=run_id,
        tool="echo",
        status="running",
        tool_digest="d",
        created_at=time.time(),
        raw_input={},
        background=True,
    )
    for key, value in owner_fields("tok").items():
        setattr(rec, key, value)
    store.insert(rec)
    missing = str(reg.project.root / "nowhere")  # type: ignore[union-attr]
    background.spawn(
        store,
        run_id,
        "tok",
        {
            "root": str(reg.project.root),  # type: ignore[union-attr]
            "tools": [missing],
        },
    )
    done = runs.wait(store, run_id, timeout=30)
    assert done.status == "failed" and "could not load the registry" in done.error["message"]


def test_background_flag(reg: Registry) -> None:
    started = reg.call("echo", {"msg": "later"}, background=True)
    assert started.status is RunStatus.RUNNING
    done = runs.wait(api.resolve_store(reg), started.run_id, timeout=30)
    assert done.status == "succeeded" and done.output == {"msg": "later"}
    assert runs.to_result(done).output == {"msg": "later"}


def test_cancel_stops_the_worker(reg: Registry) -> None:
    started = reg.call("bg", {"s": 30})
    store = api.resolve_store(reg)
    pid = store.get(started.run_id).owner_pid
    rec = runs.cancel(store, started.run_id)
    assert rec.status == "cancelled" and rec.raw_input is None
    assert any("SIGTERM" in n for n in rec.notes)
    for _ in range(100):
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.05)
    else:
        pytest.fail("worker still alive")
    assert store.get(started.run_id).status == "cancelled"


def test_approved_background_run(reg: Registry) -> None:
    pending = reg.call("bg_approve", {"s": 0})
    assert pending.status is RunStatus.AWAITING_APPROVAL
    running = reg.approve(pending.run_id)
    assert running.status is RunStatus.RUNNING
    done = runs.wait(api.resolve_store(reg), pending.run_id, timeout=30)
    assert done.status == "succeeded" and done.approval is not None


def test_killed_worker_becomes_interrupted(reg: Registry) -> None:
    started = reg.call("bg", {"s": 30})
    store = api.resolve_store(reg)
    pid = store.get(started.run_id).owner_pid
    time.sleep(0.3)
    os.killpg(pid, signal.SIGKILL)
    for _ in range(100):
        if store.get(started.run_id).status != "running":
            break
        store.sweep()
        time.sleep(0.05)
    rec = store.get(started.run_id)
    assert rec.status == "interrupted" and rec.raw_input is None


def test_cancel_pending_runs_and_refusals(reg: Registry) -> None:
    from toolctl.runtime import RunStateError

    store = api.resolve_store(reg)
    pending = reg.call("approve_echo", {"msg": "x"})
    assert runs.cancel(store, pending.run_id).status == "cancelled"
    with pytest.raises(RunStateError, match="already ended"):
        runs.cancel(store, pending.run_id)
    slow = reg.call("bg", {"s": 5}).run_id
    with pytest.raises(TimeoutError):
        runs.wait(store, slow, timeout=0.1)
    runs.cancel(store, slow)


def test_background_needs_history(reg: Registry) -> None:
    result = reg.call("bg", {"s": 0}, store=False)
    assert result.status is RunStatus.FAILED and result.error is not None
    assert "history" in result.error.message


def test_a_worker_that_cannot_start_fails_the_run(
    reg: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolctl.runtime.execution import background

    def broken(*args: object, **kwargs: object) -> int:
        raise OSError("no processes left")

    monkeypatch.setattr(background, "spawn", broken)
    result = reg.call("bg", {"s": 0})
    assert result.status is RunStatus.FAILED and result.error is not None
    assert "could not start the background worker" in result.error.message
    assert api.resolve_store(reg).get(result.run_id).status == "failed"


def test_a_foreground_run_is_not_cancelled_from_outside(reg: Registry) -> None:
    from toolctl.runtime import RunStateError
    from toolctl.runtime.history.sqlite import RunRecord, owner_fields
    from toolctl.runtime.pipeline.call import new_run_id

    store = api.resolve_store(reg)
    rec = RunRecord(
        run_id=new_run_id(), tool="echo", status="running", tool_digest="d", created_at=time.time()
    )
    for key, value in owner_fields("fg").items():
        setattr(rec, key, value)
    store.insert(rec)
    with pytest.raises(RunStateError, match="running in the foreground"):
        runs.cancel(store, rec.run_id)
    assert store.get(rec.run_id).status == "running"


def test_the_runtime_reaps_its_workers_and_close_leaves_them_running(reg: Registry) -> None:
    from tests.runtime_helpers import own_runtime

    with own_runtime() as rt:
        quick = reg.call("bg", {"s": 0})
        slow = reg.call("bg", {"s": 30})
        store = api.resolve_store(reg)
        quick_pid, slow_pid = (store.get(r.run_id).owner_pid for r in (quick, slow))
        assert runs.wait(store, quick.run_id, timeout=30).status == "succeeded"
        for _ in range(200):  # the reaper collects the worker's exit: no zombie is left
            if quick_pid not in rt.workers.running():
                break
            time.sleep(0.05)
        assert rt.workers.running() == [slow_pid]
        assert not os.path.exists(f"/proc/{quick_pid}")
    # closing the runtime forgets its workers but never stops a run they are executing
    assert rt.workers.running() == []
    store = api.resolve_store(reg)  # the closed runtime closed the stores it opened
    assert store.get(slow.run_id).status == "running"
    os.kill(slow_pid, 0)
    assert runs.cancel(store, slow.run_id).status == "cancelled"
