"""Background runs in a detached worker."""

from __future__ import annotations

import os
import signal
import time

import pytest

from toolctl.registry import Registry
from toolctl.runtime import RunStatus, api, runs

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
