"""Background runs on a distributed task queue: Procrastinate jobs in the same PostgreSQL database
as the run history, executed by ``toolctl worker`` processes on any machine.

With a PostgreSQL state URL, :func:`toolctl.runtime.execution.background.spawn` enqueues instead of
starting
a local worker process. The run row is the source of truth; the job only says "run this id":

1. enqueue: the row is ``running``, owned by the enqueuing call's token, host ``queue`` and a
   grace lease (:data:`QUEUE_GRACE_S`); its locator records whether the tool is idempotent
   (``mcp.annotations.idempotentHint``) and the attempt number. A sweep that finds the grace
   over asks the queue (:func:`reconcile`): a job still waiting or being taken extends it
   (waiting for a worker is not a sign of death); a job that failed or vanished before any
   worker claimed the run — the run never started — re-queues an idempotent tool's run and ends
   any other ``failed``, saying it never ran. A queued row without a lease (written by an older
   toolctl) is checked the same way.
2. a worker claims the run with a compare-and-set from that token to its own identity and a short
   lease (:data:`LEASE_S`), renewed by the process's lease heartbeat
   (:mod:`toolctl.runtime.history.heartbeat`, shared with foreground calls) while the handler runs.
   A job
   whose claim fails (cancelled meanwhile, or a duplicate job) does nothing; one whose claim hits
   a database error is retried by Procrastinate (:data:`CLAIM_RETRY`): the claim is a
   compare-and-set on the queue token, so a retried job never runs a run twice.
3. cancellation (``toolctl runs cancel`` on any machine) ends the row; the heartbeat sees the row
   is no longer its own and aborts the handler; the worker's final write is a compare-and-set and
   loses, so the cancellation stands.
4. a worker killed mid-run stops renewing its lease; the next sweep (every worker sweeps
   periodically, every store sweeps when opened) finds the expired lease and marks the run
   ``interrupted``, or, for an idempotent tool, re-queues it (up to :data:`MAX_ATTEMPTS`) with
   a note saying so. A run is never lost and never silently run twice.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import secrets
import threading
import time
from typing import TYPE_CHECKING, Any

from toolctl.config import DEFAULT_APPROVAL_TTL_S
from toolctl.runtime.errors import DatabaseUnavailableError
from toolctl.runtime.history import ledger
from toolctl.runtime.result import ErrorCode

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from procrastinate import App

    from toolctl.runtime.history.capabilities import QueueStore
    from toolctl.runtime.history.postgres import PostgresStore
    from toolctl.runtime.history.records import RowChanges, RunRecord, RunStore

log = logging.getLogger("toolctl.worker")

TASK = "toolctl.run"
QUEUE = "toolctl"
LEASE_S = 30.0  # a worker renews its lease every LEASE_S / 3; a dead one is seen after LEASE_S
MAX_ATTEMPTS = 3
QUEUED_HOST = "queue"  # owner_host of a run waiting in the queue (no process owns it yet)
QUEUE_GRACE_S = LEASE_S  # how often a sweep checks that a queued run's job still waits
# A claim that hits a database error (the server restarting under an idle worker) is retried:
# (attempts, seconds between them); about a minute in all.
CLAIM_RETRY = (8, 8)
WAITING_JOB = ("todo", "doing")  # Procrastinate job states that will still claim the run
# A job is stalled when its worker has sent no heartbeat for this long (Procrastinate's workers
# beat every 10 s; its own default threshold).
STALLED_AFTER_S = 30
FINISHED_JOB_HOURS = 24  # failed, cancelled and aborted jobs kept this long, for inspection


def _queued() -> RowChanges:
    """The owner fields of a run waiting in the queue: no process, a grace lease."""
    return {
        "owner_host": QUEUED_HOST,
        "owner_pid": None,
        "owner_start": None,
        "lease_expires": time.time() + QUEUE_GRACE_S,
    }


def make_app(url: str, pool_max: int | None = None, job: Callable[..., None] | None = None) -> App:
    """A new Procrastinate app on ``url`` (not opened): the enqueuing side's is
    :meth:`PostgresStore.queue_app` (opened on a pool of the store's; it defers the task by
    name), a worker makes its own with the task's body ``job`` registered (with its retry
    strategy), whose pool keeps one connection open and opens at most ``pool_max``."""
    try:
        from procrastinate import App, PsycopgConnector
    except ImportError:
        from toolctl.runtime.errors import StateError
        from toolctl.runtime.history.postgres import INSTALL_HINT

        raise StateError(
            "background runs with a PostgreSQL state need the procrastinate package",
            hint=INSTALL_HINT,
        ) from None
    from procrastinate import RetryStrategy

    from toolctl.runtime.errors import StateError

    if pool_max is None:
        connector = PsycopgConnector(conninfo=url)
    else:  # (Procrastinate checks each pooled connection before use itself)
        connector = PsycopgConnector(conninfo=url, min_size=1, max_size=pool_max)
    app = App(connector=connector)
    if job is not None:
        attempts, wait = CLAIM_RETRY
        retry = RetryStrategy(max_attempts=attempts, wait=wait, retry_exceptions={StateError})
        app.task(name=TASK, queue=QUEUE, pass_context=True, retry=retry)(job)
    return app


def ensure_schema(store: QueueStore) -> None:
    """Create Procrastinate's tables once per database (under the store's set-up lock)."""
    store.ensure_queue_schema()


def _queue_of(store: RunStore) -> QueueStore:
    queue = store.capabilities.queue
    if queue is None:  # callers check the capability first
        raise TypeError("this run store has no task queue")
    return queue


def enqueue(store: RunStore, run_id: str, token: str, locator: dict[str, Any]) -> int:
    """Put run ``run_id`` (stored ``running``, owned by ``token``) on the queue; the job id."""
    queue = _queue_of(store)
    ensure_schema(queue)
    ledger.hand_off(store, run_id, token, {**_queued(), "registry": locator})
    from procrastinate.exceptions import ConnectorException

    try:
        job_id = (
            queue.queue_app().configure_task(TASK, queue=QUEUE).defer(run_id=run_id, token=token)
        )
    except ConnectorException as exc:  # no connection to be had (the pool waited its timeout)
        raise DatabaseUnavailableError(
            f"database unavailable: cannot queue run {run_id}: "
            f"{type(exc.__cause__ or exc).__name__}",
            hint="the PostgreSQL server is stopped, restarting or out of connections; "
            "call the tool again in a moment",
        ) from None
    return int(job_id)


def requeue(store: RunStore, rec: RunRecord) -> bool:
    """Give a lost run of an idempotent tool to another worker; False when it may not be."""
    locator = dict(rec.registry or {})
    attempt = int(locator.get("attempt", 1))
    if not locator.get("idempotent") or attempt >= MAX_ATTEMPTS:
        return False
    token = secrets.token_hex(8)
    locator["attempt"] = attempt + 1
    note = (
        f"the worker running this run was lost (host {rec.owner_host}, pid {rec.owner_pid}); "
        f"re-queued as attempt {attempt + 1} of {MAX_ATTEMPTS} because the tool is idempotent"
    )
    # in the same compare-and-set: a sweep in between would re-queue it again
    row: RowChanges = {**_queued(), "notes": [*rec.notes, note], "registry": locator}
    if not ledger.requeue(store, rec, token, row):
        return False
    enqueue(store, rec.run_id, token, locator)
    return True


def reconcile(store: RunStore, rec: RunRecord, now: float) -> bool:
    """A queued run (host ``queue``) whose grace lease is over or missing: extend it while its
    job still waits (False); else the job failed or vanished before any worker claimed the
    run, so nothing ran: re-queue it per :func:`requeue`, or end it ``failed`` (True)."""
    job = _queue_of(store).queue_job_status(rec.run_id, rec.owner or "")
    if job in WAITING_JOB:
        ledger.extend_grace(store, rec, now + QUEUE_GRACE_S)
        return False
    if requeue(store, rec):
        return True
    lost = "vanished from" if job is None else f"ended {job} in"
    error = {
        "code": ErrorCode.INTERRUPTED.value,
        "message": f"the run's job {lost} the task queue before a worker took it; the tool "
        "never ran (call it again)",
        "details": [],
    }
    return ledger.fail_unclaimed(store, rec, error, now)


def sweeper(
    store: Callable[[], PostgresStore],
    every: float,
    stop: threading.Event,
    approval_ttl: float = DEFAULT_APPROVAL_TTL_S,
) -> None:
    """Sweep for lost runs every ``every`` seconds until ``stop`` is set (a thread's target),
    taking turns with the other processes on the database; see :func:`sweeping`."""
    while not stop.wait(every):
        try:  # opened here, not before: a process may start while the database is away
            opened = store()
            swept = opened.sweep_exclusive(
                then=functools.partial(housekeeping, opened, approval_ttl)
            )
        except Exception as exc:  # the database is away: try again next time
            log.warning("could not sweep for lost runs: %s", exc)
            continue
        if swept:
            log.info("swept lost runs: %s", ", ".join(swept))


def housekeeping(store: PostgresStore, approval_ttl: float) -> None:
    """What the process whose turn it is to sweep also does (D7): end pending runs older than
    ``approval_ttl`` (:func:`toolctl.runtime.history.expiry.expire_pending`) and tidy the task queue
    (:func:`tidy_queue`). Each part fails alone: a failure is logged, the other still runs."""
    from toolctl.runtime.history.expiry import expire_pending

    try:
        expired = expire_pending(store, approval_ttl)
        if expired:
            log.info("expired pending runs (run.approvalTtl): %s", ", ".join(expired))
    except Exception as exc:
        log.warning("could not expire pending runs: %s", exc)
    try:
        tidy_queue(store)
    except Exception as exc:
        log.warning("could not tidy the task queue: %s", exc)


def tidy_queue(store: PostgresStore, finished_hours: int = FINISHED_JOB_HOURS) -> list[int]:
    """Procrastinate's own housekeeping for the run queue: jobs stalled in ``doing`` (their
    worker died: no heartbeat for :data:`STALLED_AFTER_S`) are retried, and failed, cancelled
    and aborted jobs older than ``finished_hours`` deleted (succeeded ones are deleted as they
    finish). The stalled jobs' ids.

    Retrying a stalled job is always safe: its claim is a compare-and-set from the run's queue
    token, so a run its dead worker had claimed (now the lease sweep's to end or re-queue) is
    not taken again, and one it died before claiming is run by the next worker, once."""
    if not store.queue_exists():
        return []
    import asyncio

    return asyncio.run(_tidy(store.url, finished_hours))


async def _tidy(url: str, finished_hours: int) -> list[int]:
    app = make_app(url, pool_max=1)
    async with app.open_async():
        jobs = app.job_manager
        stalled = await jobs.get_stalled_jobs(
            queue=QUEUE, task_name=TASK, seconds_since_heartbeat=STALLED_AFTER_S
        )
        for job in stalled:
            log.warning("job %s (run %s): its worker is gone; retried", job.id, job.task_kwargs)
            await jobs.retry_job(job)
        await jobs.delete_old_jobs(
            nb_hours=finished_hours,
            queue=QUEUE,
            include_failed=True,
            include_cancelled=True,
            include_aborted=True,
        )
    return [int(job.id) for job in stalled if job.id is not None]


@contextlib.contextmanager
def sweeping(
    state: object, every: float, approval_ttl: float = DEFAULT_APPROVAL_TTL_S
) -> Iterator[None]:
    """Inside the block, sweep a PostgreSQL history ``state`` (a URL) for lost runs every
    ``every`` seconds, taking turns with the other processes on it
    (:meth:`PostgresStore.sweep_exclusive`), so expired leases end even with no worker
    running; the process whose turn it is also does the :func:`housekeeping` (pending runs
    older than ``approval_ttl`` end, the task queue is tidied). Any other ``state`` (an SQLite
    file: one machine, swept when opened): nothing."""
    from toolctl.runtime.history.sqlite import is_url, open_store

    if not is_url(state):
        yield
        return

    def store() -> PostgresStore:
        return open_store(str(state))  # type: ignore[return-value]

    stop = threading.Event()
    thread = threading.Thread(
        target=sweeper,
        args=(store, every, stop, approval_ttl),
        name="toolctl-sweeper",
        daemon=True,
    )
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()
