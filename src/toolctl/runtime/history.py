"""Run-history writes from async code: off the event loop whenever other calls are running.

A write to the SQLite history is short but touches the disk; done on the event-loop thread it
stalls every other call served by that loop. :func:`write` runs it on one writer thread
(SQLite takes one writer at a time anyway, and one thread keeps the writes in order) while other
async calls are in flight, and awaits it, so a call still returns only after its row is
committed. When this call is the only one running, or it runs on the private loop of the
synchronous API, there is nobody to stall: the write runs in place.

The writer takes every write waiting in its queue at once: consecutive writes to a store that
can batch (:meth:`toolctl.runtime.store.SqliteStore.batch`) commit in one transaction, so under
load a commit is shared by several calls instead of paid by each. A write that fails fails alone
(SQLite undoes only its statement); if a failure aborted the whole transaction, every write of
the batch reports that error: no write reports success unless it is committed. The callers'
futures are settled after the commit, with one wake-up of their loop per batch.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from toolctl.runtime.sync import owns_running_loop

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")
log = logging.getLogger("toolctl.runtime")

MAX_BATCH = 64  # writes per transaction: bounds how long the store's lock is held


class Batching(Protocol):
    """A store whose writes from one thread can share a transaction."""

    def batch(self) -> contextlib.AbstractContextManager[Callable[[], bool]]: ...


class _Job:
    """One write: ``fn`` and where its outcome goes (a loop's future, or the log)."""

    __slots__ = ("error", "fn", "future", "loop", "store", "value")

    def __init__(
        self,
        fn: Callable[[], Any],
        store: object,
        loop: asyncio.AbstractEventLoop | None,
        future: asyncio.Future[Any] | None,
    ) -> None:
        self.fn, self.store, self.loop, self.future = fn, store, loop, future
        self.value: Any = None
        self.error: BaseException | None = None


class _Writer:
    """The writer thread: runs the jobs of its queue in order, batching what it can."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._run, name="toolctl-history", daemon=True)
        self._thread.start()
        atexit.register(self.stop)  # writes handed over before exit still happen

    def submit(self, job: _Job) -> None:
        self._jobs.put(job)

    def stop(self) -> None:
        self._jobs.put(None)
        self._thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            first = self._jobs.get()
            if first is None:
                return
            jobs = [first]
            with contextlib.suppress(queue.Empty):
                while len(jobs) < MAX_BATCH:
                    job = self._jobs.get_nowait()
                    if job is None:
                        self._jobs.put(None)  # stop after this batch
                        break
                    jobs.append(job)
            for group in _groups(jobs):
                run_batch(group)
            _settle_all(jobs)


def _groups(jobs: list[_Job]) -> Iterator[list[_Job]]:
    """Runs of consecutive jobs on the same store (order kept)."""
    group: list[_Job] = []
    for job in jobs:
        if group and job.store is not group[0].store:
            yield group
            group = []
        group.append(job)
    if group:
        yield group


def run_batch(jobs: list[_Job]) -> None:
    """Run ``jobs`` (all on one store), in one transaction when the store can batch; each
    job's value or error is left on it."""
    batch = getattr(jobs[0].store, "batch", None) if len(jobs) > 1 else None
    if batch is None:
        for job in jobs:
            _run_job(job)
        return
    done: list[_Job] = []
    try:
        with batch() as intact:
            for job in jobs:
                if not _run_job(job):
                    done.append(job)
                elif not intact():
                    # The failure took the transaction with it: the writes before it are undone.
                    for earlier in done:
                        earlier.error = job.error
                    done = []
    except Exception as exc:  # BEGIN or COMMIT failed: nothing of the batch was written
        for job in jobs:
            if job.error is None:
                job.error = exc


def _run_job(job: _Job) -> bool:
    """Run one job; True when it raised."""
    try:
        job.value = job.fn()
    except BaseException as exc:  # handed to the caller, whatever it is
        job.error = exc
        return True
    return False


def _settle_all(jobs: list[_Job]) -> None:
    """Hand each outcome to its caller's loop (one wake-up per loop); log the orphans'."""
    by_loop: dict[asyncio.AbstractEventLoop, list[_Job]] = {}
    for job in jobs:
        if job.loop is None:
            if job.error is not None:
                log.error("could not record a cancelled run", exc_info=job.error)
            continue
        by_loop.setdefault(job.loop, []).append(job)
    for loop, mine in by_loop.items():
        # The loop may be closed: then nobody waits for these writes any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, mine)


def _settle(jobs: list[_Job]) -> None:
    for job in jobs:
        future = job.future
        if future is None or future.done():  # its caller was cancelled meanwhile
            continue
        if job.error is None:
            future.set_result(job.value)
        else:
            future.set_exception(job.error)


_writer: _Writer | None = None
_writer_lock = threading.Lock()
_active = 0


def _the_writer() -> _Writer:
    global _writer
    if _writer is None:
        with _writer_lock:
            if _writer is None:
                _writer = _Writer()
    return _writer


def _reset_after_fork() -> None:
    global _writer, _writer_lock
    _writer = None  # the child has no writer thread
    _writer_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


@contextlib.contextmanager
def active() -> Iterator[None]:
    """Count an async call as in flight while the block runs."""
    global _active
    _active += 1
    try:
        yield
    finally:
        _active -= 1


async def write(
    fn: Callable[[], T],
    *,
    store: object = None,
    if_cancelled: Callable[[], object] | None = None,
) -> T:
    """Run the history write ``fn`` and return its value: in place when no other async call is
    in flight, else on the writer thread (awaited: the row is committed when this returns).

    ``store``: the store ``fn`` writes to; consecutive writes to the same store that can batch
    share one transaction. Once handed over the write happens even if the caller is cancelled
    meanwhile; then ``if_cancelled`` runs on the writer right after it (to record the
    cancellation).
    """
    if _active <= 1 or owns_running_loop():
        return fn()
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    writer = _the_writer()
    writer.submit(_Job(fn, store, loop, future))
    try:
        return await future  # cancelling the caller cancels only this future, not the write
    except asyncio.CancelledError:
        if if_cancelled is not None:
            writer.submit(_Job(if_cancelled, store, None, None))
        raise
