"""Run-history writes from async code: off the event loop whenever other calls are running.

A write to the SQLite history is short but touches the disk; done on the event-loop thread it
stalls every other call served by that loop. :func:`write` runs it on one writer thread
(SQLite takes one writer at a time anyway, and one thread keeps the writes in order) while other
async calls are in flight, and awaits it, so a call still returns only after its row is
committed. When this call is the only one running, or it runs on the private loop of the
synchronous API, there is nobody to stall: the write runs in place.

The writer takes every write waiting in its queue at once, after waiting :data:`GATHER_S` for
more when other calls are in flight (under load the writes of concurrent calls come a
millisecond or so apart, and the writer, faster than that, committed nearly every one alone):
consecutive writes to a store that can batch
(:meth:`toolctl.runtime.history.sqlite.SqliteStore.batch`) commit in one transaction, so under
load a commit is shared by several calls instead of paid by each. A write that fails fails alone
(SQLite undoes only its statement); if a failure aborted the whole transaction, every write of
the batch reports that error: no write reports success unless it is committed. The callers'
futures are settled after the commit, with one wake-up of their loop per batch.

On a store on a server (PostgreSQL) each write is a round trip, so running the batch's writes
one after the other in a transaction would save nothing: there the calls' writes are
:class:`Staged` (what comes before the row write, the write itself, what comes after it), and
the writer sends the row writes of the staged jobs waiting for it in one transaction, as one
round trip (:meth:`~toolctl.runtime.history.capabilities.PipelineStore.write_many`), then runs
what comes after each once the transaction is committed. The same promises hold: a write that
fails fails alone, a transaction that fails fails every write of it, and each caller learns its
row is written only after the commit.
"""

from __future__ import annotations

import atexit
import contextlib
import logging
import queue
import threading
import time
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any, TypeVar

from toolctl.runtime.resources import current
from toolctl.runtime.sync import owns_running_loop

if TYPE_CHECKING:
    import asyncio

    from toolctl.runtime.history.capabilities import PipelineStore
    from toolctl.runtime.history.records import RowWrite, RunStore

T = TypeVar("T")
log = logging.getLogger("toolctl.runtime")

MAX_BATCH = 64  # writes per transaction: bounds how long the store's lock is held
# How long the writer waits for more writes before it commits one while other calls are in
# flight (their rows come within moments): a commit and a wake-up of the callers' loop shared
# by several calls instead of paid by each. Wall time the call waits, no CPU.
GATHER_S = 0.002


class Staged:
    """A history write in three steps, so that the writer can send the row writes of several
    calls together: ``prepare()`` does what comes before the row write and returns it (None:
    nothing to write, nothing after), ``then(write, changed)`` what comes after it, once it is
    made (``changed``: what :func:`~toolctl.runtime.history.ledger.apply` returned).
    Calling it makes the three steps at once."""

    __slots__ = ("prepare", "store", "then")

    def __init__(
        self,
        store: RunStore,
        prepare: Callable[[], RowWrite | None],
        then: Callable[[RowWrite, bool], object],
    ) -> None:
        self.store, self.prepare, self.then = store, prepare, then

    def __call__(self) -> None:
        from toolctl.runtime.history import ledger

        write = self.prepare()
        if write is not None:
            self.then(write, ledger.apply(self.store, write))


class _Job:
    """One write: ``fn`` and where its outcome goes (a loop's future, or the log)."""

    __slots__ = ("error", "fn", "future", "loop", "store", "value")

    def __init__(
        self,
        fn: Callable[[], Any],
        store: RunStore | None,
        loop: asyncio.AbstractEventLoop | None,
        future: asyncio.Future[Any] | None,
    ) -> None:
        self.fn, self.store, self.loop, self.future = fn, store, loop, future
        self.value: Any = None
        self.error: BaseException | None = None


class _Writer:
    """The writer thread: runs the jobs of its queue in order, batching what it can."""

    def __init__(
        self,
        in_flight: Callable[[], int] = lambda: 0,
        pause: Callable[[float], object] = time.sleep,
    ) -> None:
        self._jobs: queue.SimpleQueue[_Job | None] = queue.SimpleQueue()
        self._in_flight = in_flight  # async calls running now (each may have a write coming)
        self._pause = pause
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
            if _can_batch(first) and self._in_flight() > 1 + self._jobs.qsize():
                # Asleep, not waiting on the queue: a write handed over meanwhile wakes nobody.
                self._pause(GATHER_S)
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


def _can_batch(job: _Job) -> bool:
    # Only a store that commits several writes at once gains by waiting for more of them.
    if job.store is None:
        return False
    capabilities = job.store.capabilities
    return capabilities.batching is not None or capabilities.pipelining is not None


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
    store = jobs[0].store
    capabilities = store.capabilities if store is not None and len(jobs) > 1 else None
    if capabilities is not None and capabilities.pipelining is not None:
        _run_pipelined(jobs, capabilities.pipelining)
        return
    batching = capabilities.batching if capabilities is not None else None
    if batching is None:
        for job in jobs:
            _run_job(job)
        return
    done: list[_Job] = []
    try:
        with batching.batch() as intact:
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


def _run_pipelined(jobs: list[_Job], store: PipelineStore) -> None:
    """Run ``jobs`` (all on ``store``): the row writes of consecutive staged jobs together;
    any other job alone, in its place (what it does may depend on the writes before it)."""
    staged: list[_Job] = []
    for job in jobs:
        if isinstance(job.fn, Staged):
            staged.append(job)
            continue
        _write_together(staged, store)
        staged = []
        _run_job(job)
    _write_together(staged, store)


def _write_together(jobs: list[_Job], store: PipelineStore) -> None:
    """Prepare each staged job, make their row writes in one transaction, then finish each
    job whose write was made (after the commit: a job is told only of a committed row)."""
    writing: list[tuple[_Job, Staged, RowWrite]] = []
    for job in jobs:
        staged = job.fn
        assert isinstance(staged, Staged)
        write = _run_step(job, staged.prepare)
        if write is not None:
            writing.append((job, staged, write))
    if not writing:
        return
    try:
        outcomes = store.write_many([write for _, _, write in writing])
    except Exception as exc:  # the transaction failed: none of them is written
        for job, _, _ in writing:
            job.error = exc
        return
    for (job, staged, write), outcome in zip(writing, outcomes, strict=True):
        if isinstance(outcome, Exception):
            job.error = outcome  # this write alone failed; the others are committed
        else:
            _run_step(job, staged.then, write, outcome)


def _run_step(job: _Job, step: Callable[..., T], *args: Any) -> T | None:
    """One step of a staged job; its error is left on the job (None then)."""
    try:
        return step(*args)
    except BaseException as exc:  # handed to the caller, whatever it is
        job.error = exc
        return None


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
        try:
            loop.call_soon_threadsafe(_settle, mine)
        except RuntimeError:  # the loop is closed: nobody waits for these writes any more
            for job in mine:
                _log_unawaited(job)


def _log_unawaited(job: _Job) -> None:
    """A failed write nobody awaits any more goes to the log rather than nowhere."""
    if job.error is not None:
        log.error("could not record a run whose caller has gone", exc_info=job.error)


def _settle(jobs: list[_Job]) -> None:
    for job in jobs:
        future = job.future
        if future is None or future.done():  # its caller was cancelled meanwhile
            _log_unawaited(job)
            continue
        if job.error is None:
            future.set_result(job.value)
        else:
            future.set_exception(job.error)


class HistoryWriter:
    """The history writer of a :class:`~toolctl.runtime.resources.Runtime`: its writer thread
    (made on first use), its timer thread, and how many async calls are in flight (``active``:
    with one alone, writes happen in place)."""

    def __init__(self) -> None:
        self._writer: _Writer | None = None
        self._lock = threading.Lock()
        self.timers = _Timers()
        self.active = 0

    def writer(self) -> _Writer:
        if self._writer is None:
            with self._lock:
                if self._writer is None:
                    self._writer = _Writer(lambda: self.active)
        return self._writer

    def close(self) -> None:
        """Make the writes handed over so far, then stop both threads."""
        with self._lock:
            writer, self._writer = self._writer, None
        if writer is not None:
            writer.stop()
        self.timers.close()


@contextlib.contextmanager
def active() -> Iterator[None]:
    """Count an async call as in flight while the block runs."""
    history = current().history
    history.active += 1
    try:
        yield
    finally:
        history.active -= 1


class Timer:
    """A callback :func:`later` runs unless it is cancelled first."""

    __slots__ = ("_cancelled", "_fn", "_lock", "_timers", "deadline")

    def __init__(self, deadline: float, fn: Callable[[], object], timers: _Timers) -> None:
        self.deadline = deadline
        self._fn = fn
        self._timers = timers
        self._lock = threading.Lock()
        self._cancelled = False

    def cancel(self) -> None:
        """Cancel it; if it is running, wait until it is done (so what it writes comes before
        whatever the caller writes next)."""
        with self._lock:
            self._cancelled = True
        self._timers.forget(self)

    def fire(self) -> None:
        with self._lock:
            if self._cancelled:
                return
            self._cancelled = True
            try:
                self._fn()
            except Exception:  # nobody awaits it: the log is where its failure shows
                log.exception("a deferred history write failed")


class _Timers:
    """One daemon thread for :func:`later`. Every timer has the same delay, so the pending ones
    are in deadline order in a dict (insertion order): starting or cancelling one is a dict
    operation under a lock, and the thread, once woken, polls while calls keep coming instead
    of being woken for each (a wake-up per call would cost the calls more than the timers)."""

    IDLE_AFTER_S = 1.0  # no timer for this long: the thread sleeps until the next one

    def __init__(self) -> None:
        self._pending: dict[Timer, None] = {}
        self._cond = threading.Condition(threading.Lock())
        self._asleep = True
        self._closed = False
        self._thread: threading.Thread | None = None

    def start(self, delay: float, fn: Callable[[], object]) -> Timer:
        timer = Timer(time.monotonic() + delay, fn, self)
        with self._cond:
            self._pending[timer] = None
            if self._asleep:
                self._asleep = False
                if self._thread is None:
                    self._thread = threading.Thread(
                        target=self._run, args=(delay,), name="toolctl-timers", daemon=True
                    )
                    self._thread.start()
                else:
                    self._cond.notify()
        return timer

    def close(self) -> None:
        """Stop the thread; timers not yet due never fire."""
        with self._cond:
            self._pending.clear()
            self._closed = True
            self._cond.notify()

    def forget(self, timer: Timer) -> None:
        with self._cond:
            self._pending.pop(timer, None)

    def _due(self, poll: float) -> tuple[list[Timer], float]:
        """The timers past their deadline, and how long to wait for the next one."""
        now = time.monotonic()
        due: list[Timer] = []
        for timer in self._pending:
            if timer.deadline > now:
                return due, timer.deadline - now
            due.append(timer)
        return due, poll

    def _run(self, poll: float) -> None:
        quiet_since = time.monotonic()
        while True:
            with self._cond:
                if self._closed:
                    return
                due, wait = self._due(poll)
                for timer in due:
                    del self._pending[timer]
                if self._pending or due:
                    quiet_since = time.monotonic()
                elif time.monotonic() - quiet_since > self.IDLE_AFTER_S:
                    self._asleep = True
                    self._cond.wait()
                    quiet_since = time.monotonic()
                    continue
            for timer in due:
                timer.fire()
            if not due:
                with self._cond:
                    self._cond.wait(wait)


def later(delay: float, fn: Callable[[], object]) -> Timer:
    """Run ``fn`` on the timer thread after ``delay`` seconds (every caller passes the same
    delay) unless the returned timer is cancelled first. For a deferred running row: the
    calling thread may be busy running the handler in place, where no loop timer can fire."""
    return current().history.timers.start(delay, fn)


async def write(
    fn: Callable[[], T],
    *,
    store: RunStore | None = None,
    if_cancelled: Callable[[], object] | None = None,
) -> T:
    """Run the history write ``fn`` and return its value: in place when no other async call is
    in flight, else on the writer thread (awaited: the row is committed when this returns).

    ``store``: the store ``fn`` writes to; consecutive writes to the same store that can batch
    share one transaction. Once handed over the write happens even if the caller is cancelled
    meanwhile; then ``if_cancelled`` runs on the writer right after it (to record the
    cancellation).
    """
    history = current().history
    if history.active <= 1 or owns_running_loop():
        return fn()
    import asyncio

    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    writer = history.writer()
    writer.submit(_Job(fn, store, loop, future))
    try:
        return await future  # cancelling the caller cancels only this future, not the write
    except asyncio.CancelledError:
        if if_cancelled is not None:
            writer.submit(_Job(if_cancelled, store, None, None))
        raise
