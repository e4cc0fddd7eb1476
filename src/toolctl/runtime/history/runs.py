"""Managing recorded runs: show, list, wait for, cancel."""

from __future__ import annotations

import os
import signal
import time

from toolctl.runtime.errors import RunStateError
from toolctl.runtime.history import ledger
from toolctl.runtime.history.ledger import CANCELLED_ERROR as CANCELLED_ERROR
from toolctl.runtime.history.ownership import HOST, owner_alive
from toolctl.runtime.history.records import RunRecord, RunStore
from toolctl.runtime.result import RunResult, RunStatus, ToolErrorInfo


def to_result(rec: RunRecord) -> RunResult:
    """A :class:`RunResult` view of a stored run.

    ``model_output``, ``display`` and ``transcript`` are the stored views. The raw output is
    never stored: ``output`` is its transcript form. ``model_output`` is None when it was the
    raw output and the tool's transcript transform hides parts of that.
    """
    status = RunStatus(rec.status)
    transcript = {
        k: v
        for k, v in (
            ("input", rec.input),
            ("output", rec.output),
            ("error", rec.error),
            ("suspend", rec.suspend),
            ("resume", rec.resume),
        )
        if v is not None
    }
    return RunResult(
        run_id=rec.run_id,
        tool=rec.tool,
        status=status,
        output=rec.output,
        model_output=rec.model_output,
        display=dict(rec.display or {}),
        transcript=transcript,
        error=ToolErrorInfo.from_dict(rec.error) if rec.error else None,
        suspend_payload=rec.suspend,
        started_at=rec.started_at or rec.created_at,
        ended_at=rec.ended_at,
        duration_ms=rec.duration_ms,
        notes=list(rec.notes),
        traceback=rec.traceback,
    )


def sweep_if_lost(store: RunStore, rec: RunRecord) -> None:
    """For a caller waiting on ``rec``: when its owner has died, sweep, which marks the run
    interrupted (or re-queues it). Only then: a sweep reads every running run of the history
    (on a shared store, the whole fleet's), too much to do every few seconds for each waiter."""
    if not owner_alive(rec, time.time()):
        store.sweep()


def wait(
    store: RunStore, run_id: str, timeout: float | None = None, poll: float = 0.05
) -> RunRecord:
    """Block until the run is no longer ``running``; :class:`TimeoutError` after ``timeout``."""
    deadline = None if timeout is None else time.monotonic() + timeout
    last_sweep = time.monotonic()
    while True:
        rec: RunRecord = store.get(run_id)
        if rec.status != RunStatus.RUNNING.value:
            return rec
        now = time.monotonic()
        if deadline is not None and now >= deadline:
            raise TimeoutError(f"run {rec.run_id} is still running after {timeout:g} s")
        if now - last_sweep > 1.0:
            sweep_if_lost(store, rec)
            last_sweep = now
        time.sleep(poll)
        poll = min(poll * 1.5, 0.5)


def cancel(store: RunStore, run_id: str) -> RunRecord:
    """Cancel a pending run: awaiting approval, suspended, or running in a background worker."""
    rec: RunRecord = store.get(run_id)
    if rec.status in (RunStatus.AWAITING_APPROVAL.value, RunStatus.SUSPENDED.value):
        if not ledger.cancel(store, rec):
            raise RunStateError(f"run {rec.run_id} changed state while cancelling; look again")
        return store.get(rec.run_id)
    if rec.status != RunStatus.RUNNING.value:
        raise RunStateError(f"run {rec.run_id} already ended (status: {rec.status})")
    if not rec.background:
        raise RunStateError(
            f"run {rec.run_id} is running in the foreground (pid "
            f"{rec.owner_pid}); stop it there with Ctrl-C"
        )
    if not ledger.cancel(store, rec):
        raise RunStateError(f"run {rec.run_id} finished while cancelling; look again")
    # A background process of a one-machine history runs this run only: stop it. On a shared
    # history the run is a queue job: the worker's lease heartbeat sees the cancellation and
    # aborts the handler, and the worker process, which runs other jobs, is never signalled.
    if rec.owner_host == HOST and rec.owner_pid and not store.capabilities.shared:
        notes = [*rec.notes]
        try:
            os.killpg(rec.owner_pid, signal.SIGTERM)
            notes.append(f"worker process {rec.owner_pid} was sent SIGTERM")
        except (ProcessLookupError, PermissionError):
            notes.append("the worker process had already ended")
        store.update(rec.run_id, notes=notes)
    return store.get(rec.run_id)
