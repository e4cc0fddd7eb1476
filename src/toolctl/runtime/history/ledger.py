"""The run ledger: the only code that changes a run's status.

A run row moves through these states (every arrow is one function here, and no other code
writes ``status`` or claims a run)::

    begin ──► running ──► succeeded | failed | cancelled | declined | interrupted   (settle)
      │          │  ▲
      │          │  └── claim (approve, resume)     ◄── awaiting_approval | suspended
      │          └────► awaiting_approval | suspended                              (settle)
      ├──► handed to a worker (hand_off, approve_to_worker) ──► take (a worker's claim)
      └── cancel · sweep (interrupt, fail_unclaimed) · requeue · extend_grace · rebind

Every status change is a compare-and-set on the row (the status it expects and, for a run
being executed, the owner token that holds it), so the promises hold on every store:

* a pending run is approved or resumed at most once (:func:`claim` is a durable
  compare-and-set from the state it was read in);
* a ``running`` row is never lost: it ends in a final state written by its owner, by
  ``runs cancel``, or by a sweep once its owner is dead (:func:`sweep`);
* a non-idempotent tool's run executes at most once: a lost run is marked ``interrupted``,
  never re-run; only an idempotent tool's background run is re-queued (:func:`requeue`).

The stores are row storage (:class:`~toolctl.runtime.history.records.RunStore`); which transition is
allowed is decided here. The functions are synchronous (the history writer, a worker thread
and the synchronous API call them); the async front ends run them off the event loop with
:func:`off_loop`.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, TypeVar

from toolctl.runtime.history.ownership import (
    end_changes,
    interrupt_changes,
    owner_alive,
    owner_fields,
)
from toolctl.runtime.history.records import RowWrite
from toolctl.runtime.result import ErrorCode, RunStatus
from toolctl.runtime.sync import owns_running_loop

if TYPE_CHECKING:
    from collections.abc import Callable

    from typing_extensions import ParamSpec, Unpack

    from toolctl.runtime.history.records import RowChanges, RunRecord, RunStore

    P = ParamSpec("P")

T = TypeVar("T")

RUNNING = RunStatus.RUNNING.value
AWAITING_APPROVAL = RunStatus.AWAITING_APPROVAL.value
SUSPENDED = RunStatus.SUSPENDED.value
PENDING = (AWAITING_APPROVAL, SUSPENDED)

CANCELLED_ERROR = {
    "code": ErrorCode.CANCELLED.value,
    "message": "the run was cancelled",
    "details": [],
}


async def off_loop(
    store: RunStore | None, fn: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs
) -> T:
    """``fn(*args, **kwargs)``, which does store I/O (a PostgreSQL round trip, the fsync of a
    durable write), on a worker thread so that it never blocks a shared event loop. In place
    for the in-memory store (``store`` given and without history) and on the synchronous API's
    private loop, which nothing else runs on
    (:func:`~toolctl.runtime.sync.owns_running_loop`)."""
    if owns_running_loop() or (store is not None and not store.capabilities.history):
        return fn(*args, **kwargs)
    import asyncio  # here: a call that needs no loop never imports asyncio

    return await asyncio.to_thread(fn, *args, **kwargs)


# ---------------------------------------------------------------- a call's own run


def apply(store: RunStore, write: RowWrite) -> bool:
    """Make ``write`` (one of the writes below, made earlier) on ``store``: True when it wrote
    the row (an insert always; an update when the row was still as expected)."""
    if write.record is not None:
        store.insert(write.record, durable=write.durable)
        return True
    return store.update(
        write.run_id,
        expect_status=write.expect_status,
        expect_owner=write.expect_owner,
        durable=write.durable,
        **(write.changes or {}),
    )


def begin(store: RunStore, rec: RunRecord, *, durable: bool = False) -> None:
    """Record a new run (``running``, or already in its final or pending state); ``durable``
    for a run entering a pending state."""
    apply(store, begin_write(rec, durable=durable))


def begin_write(rec: RunRecord, *, durable: bool = False) -> RowWrite:
    """:func:`begin`'s write, to be made later (the history writer's batch)."""
    return RowWrite(rec.run_id, record=rec, durable=durable)


def record(store: RunStore, run_id: str, row: RowChanges, *, durable: bool = False) -> None:
    """Write the row of a run this call has just made and nobody else knows yet (its
    ``running`` row after a deferred insert, its hand-off to a worker): no compare-and-set."""
    apply(store, record_write(run_id, row, durable=durable))


def record_write(run_id: str, row: RowChanges, *, durable: bool = False) -> RowWrite:
    """:func:`record`'s write, to be made later."""
    return RowWrite(run_id, changes=row, durable=durable)


def settle(
    store: RunStore,
    run_id: str,
    row: RowChanges,
    *,
    status: str,
    owner: str | None,
    durable: bool = False,
) -> str | None:
    """Move a run this call holds (in ``status``, owned by ``owner``) to the state in ``row``:
    its final state, or a pending one (``durable``). None when done; else the state another
    writer (``runs cancel``, a sweep) left it in, which stands."""
    write = settle_write(run_id, row, status=status, owner=owner, durable=durable)
    return settled(store, write, apply(store, write))


def settle_write(
    run_id: str, row: RowChanges, *, status: str, owner: str | None, durable: bool = False
) -> RowWrite:
    """:func:`settle`'s compare-and-set, to be made later; :func:`settled` reads its outcome."""
    return RowWrite(run_id, changes=row, expect_status=status, expect_owner=owner, durable=durable)


def settled(store: RunStore, write: RowWrite, changed: bool) -> str | None:
    """What :func:`settle` returns once its ``write`` was made: None when it ``changed`` the
    row, else the state another writer left the run in."""
    return None if changed else str(store.get(write.run_id).status)


def claim(
    store: RunStore,
    run_id: str,
    *,
    expect: str,
    owner: str,
    lease: float,
    row: RowChanges,
) -> bool:
    """Take over a pending run (approve: from ``awaiting_approval``; resume: from
    ``suspended``) as ``running``, owned by ``owner``: a durable compare-and-set, so it happens
    at most once (a claim lost to a power loss would let it be approved or resumed again)."""
    changes: RowChanges = {**row, **owner_fields(owner, lease), "status": RUNNING, "binding": None}
    return store.update(run_id, expect_status=expect, durable=True, **changes)


# ---------------------------------------------------------------- pending runs


def approve_to_worker(
    store: RunStore, run_id: str, token: str, lease: float, row: RowChanges
) -> bool:
    """Approve a background run: ``awaiting_approval`` → ``running``, held by the hand-off
    ``token`` until a worker takes it (at most once, durably)."""
    changes: RowChanges = {**row, **owner_fields(token, lease), "status": RUNNING}
    return store.update(run_id, expect_status=AWAITING_APPROVAL, durable=True, **changes)


def rebind(store: RunStore, run_id: str, **row: Unpack[RowChanges]) -> bool:
    """Re-approve a suspended run for a changed tool definition (it stays ``suspended``)."""
    return store.update(run_id, expect_status=SUSPENDED, durable=True, **row)


def cancel(store: RunStore, rec: RunRecord) -> bool:
    """End ``rec`` as ``cancelled``: a pending run from its state, a background run from
    ``running`` under its owner. False when it changed state meanwhile."""
    changes = end_changes(RunStatus.CANCELLED, CANCELLED_ERROR, time.time())
    if rec.status in PENDING:
        return store.update(rec.run_id, expect_status=rec.status, **changes)
    changes["notes"] = [*rec.notes]
    return store.update(rec.run_id, expect_status=RUNNING, expect_owner=rec.owner, **changes)


def expire(store: RunStore, rec: RunRecord, error: dict[str, Any], now: float) -> bool:
    """End a pending run nobody answered within ``run.approvalTtl`` as ``cancelled`` with
    ``error`` (code ``expired``); an approval or resume landing at the same moment wins or
    loses cleanly (see :mod:`toolctl.runtime.history.expiry`)."""
    changes = end_changes(RunStatus.CANCELLED, error, now)
    return store.update(rec.run_id, expect_status=rec.status, durable=True, **changes)


# ---------------------------------------------------------------- background runs


def hand_off(store: RunStore, run_id: str, token: str, row: RowChanges) -> None:
    """Update a run held by the hand-off ``token`` (waiting for its worker, or re-queued)
    without changing its status: where the worker finds its project, its queue lease."""
    store.update(run_id, expect_owner=token, durable=True, **row)


def take(store: RunStore, run_id: str, token: str, owner: str, lease: float) -> bool:
    """A worker claims a handed-off run: from the hand-off ``token`` to its own ``owner``
    (a compare-and-set on the token, so a duplicate or retried job never runs it twice)."""
    return store.update(
        run_id,
        expect_status=RUNNING,
        expect_owner=token,
        durable=True,
        **owner_fields(owner, lease),
    )


def fail_owned(store: RunStore, run_id: str, owner: str, error: dict[str, Any]) -> bool:
    """End a run its worker (``owner``) could not run (its registry failed to load, its data
    was modified) as ``failed``."""
    return store.update(
        run_id,
        expect_status=RUNNING,
        expect_owner=owner,
        **end_changes(RunStatus.FAILED, error, time.time()),
    )


def requeue(store: RunStore, rec: RunRecord, token: str, row: RowChanges) -> bool:
    """Give a lost run (of an idempotent tool) to another worker: owned by the new hand-off
    ``token``, in the same compare-and-set that takes it from the dead owner (a sweep in
    between would re-queue it again)."""
    changes: RowChanges = {**row, "owner": token}
    return store.update(
        rec.run_id, expect_status=RUNNING, expect_owner=rec.owner, durable=True, **changes
    )


def extend_grace(store: RunStore, rec: RunRecord, until: float) -> bool:
    """A queued run whose job still waits: its lease runs on to ``until``."""
    return store.update(
        rec.run_id, expect_status=RUNNING, expect_owner=rec.owner, lease_expires=until
    )


def fail_unclaimed(store: RunStore, rec: RunRecord, error: dict[str, Any], now: float) -> bool:
    """A queued run whose job failed or vanished before any worker took it: ``failed`` (the
    tool never ran)."""
    return store.update(
        rec.run_id,
        expect_status=RUNNING,
        expect_owner=rec.owner,
        durable=True,
        **end_changes(RunStatus.FAILED, error, now),
    )


# ---------------------------------------------------------------- the sweep


def interrupt(store: RunStore, rec: RunRecord, now: float) -> bool:
    """A run whose owner died: ``interrupted`` (never re-run)."""
    return store.update(
        rec.run_id,
        expect_status=RUNNING,
        expect_owner=rec.owner,
        durable=True,
        **interrupt_changes(now),
    )


def sweep(store: RunStore) -> list[str]:
    """End the ``running`` runs whose owner is dead; the ids changed.

    An owner on this machine is judged by its pid, one elsewhere only by its lease, so a
    sweep never takes a live run away. On a store with a task queue, a run waiting for a
    worker is checked against its job (:func:`toolctl.runtime.history.queue.reconcile`), and a lost
    background run of an idempotent tool goes back on the queue
    (:func:`toolctl.runtime.history.queue.requeue`); any other lost run is ``interrupted``.
    """
    if not store.capabilities.history:
        return []  # a process-local store: every owner is this process
    now = time.time()
    queue = store.capabilities.queue
    done = []
    for rec in store.running():
        if queue is not None and _queued_and_due(rec, now):
            from toolctl.runtime.history import queue as jobs

            if jobs.reconcile(store, rec, now):
                done.append(rec.run_id)
            continue
        if owner_alive(rec, now):
            continue
        if queue is not None and rec.background and (rec.registry or {}).get("idempotent"):
            from toolctl.runtime.history import queue as jobs

            if jobs.requeue(store, rec):
                done.append(rec.run_id)
                continue
        if interrupt(store, rec, now):
            done.append(rec.run_id)
    return done


def _queued_and_due(rec: RunRecord, now: float) -> bool:
    from toolctl.runtime.history.queue import QUEUED_HOST

    return rec.owner_host == QUEUED_HOST and (rec.lease_expires or 0) <= now
