"""Calling a handler: sync or async, with or without a context, with a timeout that tells the truth.

* On the private loop of the synchronous API (:mod:`toolctl.runtime.sync`) a sync handler
  without a timeout runs in place: nothing else runs on that loop (the fast path).
* Otherwise a sync handler runs on a worker thread so the event loop stays free. Python cannot
  stop a thread: at the deadline the run ends as ``timed_out``, the abort signal is set, and the
  note says the handler may still be running. Its worker stays taken until the handler returns;
  a semaphore of ``MAX_THREADS`` slots bounds the busy workers, and when every slot is taken a
  new call is refused at once with :class:`Saturated` instead of waiting behind stuck calls.
* An async handler runs as a task; at the deadline it is cancelled and the run is ``timed_out``
  even if the coroutine swallows the cancellation.
* ``isolation: subprocess`` (see :mod:`toolctl.runtime.execution.isolation.caller`) is the way to
really stop work.

Why not ``concurrent.futures.ThreadPoolExecutor``: its workers are joined at interpreter exit, so
one stuck handler would hold up the exit of the CLI or the server for as long as it hangs. The
workers here are daemon threads (reused, and ended after ``IDLE_EXIT_S`` idle).
"""

from __future__ import annotations

import contextlib
import functools
import inspect
import queue
import threading
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from toolctl.runtime.context import AbortSignal, SuspendRequested
from toolctl.runtime.resources import current
from toolctl.runtime.sync import cancelled_error, owns_running_loop, running_loop

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")

MAX_THREADS = 32
IDLE_EXIT_S = 30.0  # an idle worker ends after this long, so a burst leaves no threads behind
CANCEL_GRACE_S = 0.2
IN_PROCESS_NOTE = (
    "the handler runs inside this process and cannot be stopped: it may still be "
    "running (declare isolation: subprocess to stop it for real)"
)
IGNORED_CANCEL_NOTE = "the handler ignored cancellation and may still be running"


class HandlerTimeout(Exception):
    """The handler did not finish in time; ``note`` says what is known about it."""

    def __init__(self, timeout: float, note: str | None = None) -> None:
        super().__init__(f"did not finish within {timeout:g} s")
        self.timeout = timeout
        self.note = note


class HandlerExit(Exception):
    """A handler raised a ``BaseException`` that must not end the process (``SystemExit``,
    ``GeneratorExit``): carried as an ordinary failure of the handler (``original``)."""

    def __init__(self, original: BaseException) -> None:
        super().__init__(str(original))
        self.original = original


def _travel() -> tuple[type[BaseException], ...]:
    """What leaves a handler as it is (asyncio is imported lazily, see
    toolctl.runtime.sync)."""
    return (Exception, cancelled_error(), KeyboardInterrupt)


class _Containing:
    """Turns a ``SystemExit`` (and the like) leaving a handler into :class:`HandlerExit`;
    ``SuspendRequested`` (a ``BaseException`` on purpose) and Ctrl-C travel as they are."""

    def __enter__(self) -> None:
        return None

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: Any
    ) -> None:
        if exc is None or isinstance(exc, (*_travel(), SuspendRequested)):
            return
        raise HandlerExit(exc) from exc


_containing = _Containing()


def _contained(fn: Callable[..., Any], args: tuple[Any, ...]) -> Any:
    """``fn(*args)`` inside :data:`_containing`."""
    with _containing:
        return fn(*args)


async def _contained_async(awaitable: Awaitable[Any]) -> Any:
    # An async handler runs as a task: a SystemExit escaping a task's step leaves the event loop
    # (ending asyncio.run or the server), so it is turned into HandlerExit inside the task.
    with _containing:
        return await awaitable


class Saturated(Exception):
    """Every handler worker is busy (stuck calls); refuse instead of queueing."""


class HandlerPool:
    """Daemon worker threads; a semaphore of ``size`` slots bounds how many are busy."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._slots = threading.BoundedSemaphore(size)
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._idle = 0
        self.busy = 0

    def submit(self, job: Callable[[], None]) -> None:
        """Run ``job`` on a worker; :class:`Saturated` when every slot is taken."""
        if not self._slots.acquire(blocking=False):
            raise Saturated(
                f"{self.size} tool calls are still running in threads (limit "
                f"{self.size}); try again later"
            )
        with self._lock:
            self.busy += 1
            if self._idle:  # an idle worker takes it from the queue
                self._idle -= 1
                self._jobs.put(job)
                return
        try:
            threading.Thread(
                target=self._work, args=(job,), name="toolctl-worker", daemon=True
            ).start()
        except BaseException:
            self._done()
            raise

    def _done(self) -> None:
        with self._lock:
            self.busy -= 1
        self._slots.release()

    def _work(self, job: Callable[[], None] | None) -> None:
        while job is not None:
            try:
                job()
            finally:
                with self._lock:
                    self.busy -= 1
                    self._idle += 1
                self._slots.release()
            try:
                job = self._jobs.get(timeout=IDLE_EXIT_S)
            except queue.Empty:
                with self._lock:
                    # A job put while we timed out was meant for an idle worker: take it.
                    try:
                        job = self._jobs.get_nowait()
                    except queue.Empty:
                        self._idle -= 1
                        job = None


_PLAIN = frozenset({dict, list, str, int, float, bool, type(None)})  # never awaitable


def busy_workers() -> int:
    """How many handler workers are running a handler right now (stuck ones included)."""
    return current().handler_pool.busy


@functools.lru_cache(maxsize=1024)
def wants_context(fn: Callable[..., Any]) -> bool:
    """True when ``fn`` takes a second positional argument (the :class:`ToolContext`)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


@functools.lru_cache(maxsize=1024)
def is_async(fn: Callable[..., Any]) -> bool:
    """True for ``async def`` functions and objects with an ``async def __call__``."""
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        type(fn).__call__ if not inspect.isroutine(fn) else None
    )


def _complete(call: Callable[[], Any]) -> Any:
    result = call()
    if inspect.isawaitable(result):  # a sync function that returned an awaitable
        import asyncio

        result = asyncio.run(_contained_async(result))
    return result


def _named(name: str, call: Callable[[], Any]) -> Any:
    # The worker carries the run's name while it runs it (thread dumps, py-spy).
    thread = threading.current_thread()
    thread.name = name
    try:
        return _complete(call)
    finally:
        thread.name = "toolctl-worker"


def _on_worker(
    call: Callable[[], Any], name: str, ended: Callable[[], None]
) -> asyncio.Future[Any]:
    """Run ``call`` on a pool worker; its outcome in a future of the running loop. ``ended``
    runs once ``call`` has returned, or once it is known it never will run."""
    loop = running_loop()
    afut: asyncio.Future[Any] = loop.create_future()

    def job() -> None:
        if afut.cancelled():
            ended()
            return
        try:
            value, error = _named(name, call), None
        except BaseException as exc:  # SuspendRequested and KeyboardInterrupt travel too
            value, error = None, exc
        ended()
        # The loop may be gone: then nobody waits for this (timed-out) call any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, afut, value, error)

    current().handler_pool.submit(job)
    return afut


def _settle(afut: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if afut.done():
        return
    if error is None:
        afut.set_result(value)
    else:
        afut.set_exception(error)


async def invoke(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    timeout: float | None,
    abort: AbortSignal,
    *,
    in_place: bool = False,
    name: str = "toolctl-handler",
    ended: Callable[[], None] = lambda: None,
) -> Any:
    """Call ``fn(*args)``; :class:`HandlerTimeout` past ``timeout``.

    ``in_place``: a sync handler without a timeout may run right here (on a private loop).
    ``ended``: called once the handler has really ended, which may be after this returns (a
    timed-out handler goes on in its thread, or ignores its task's cancellation).
    """
    if in_place and timeout is None and not is_async(fn):
        try:
            result = _contained(fn, args)
            if type(result) in _PLAIN or not inspect.isawaitable(result):
                return result
            # A sync function that returned an awaitable: await it as an async handler's
            # coroutine is (a task of its own, a SystemExit in it contained).
            return await in_task(_contained_async(result))
        finally:
            ended()
    import asyncio

    started: asyncio.Future[Any]
    try:
        running_loop()
        if is_async(fn):
            started = asyncio.ensure_future(_contained_async(fn(*args)))
            started.add_done_callback(lambda _: ended())
        else:
            started = _on_worker(lambda: _contained(fn, args), name, ended)
    except BaseException:  # the handler never started
        ended()
        raise
    if is_async(fn):
        return await _await_task(started, timeout, abort)
    try:
        done, _ = await asyncio.wait({started}, timeout=timeout)
    except asyncio.CancelledError:
        abort.abort("cancelled")
        started.cancel()
        raise
    if not done:
        abort.abort("timeout")
        started.cancel()
        raise HandlerTimeout(timeout or 0.0, IN_PROCESS_NOTE)
    return started.result()


async def off_loop(fn: Callable[..., T], *args: Any, name: str = "toolctl-worker") -> T:
    """``fn(*args)`` away from a shared event loop: on a handler worker thread, so the loop
    serves other requests meanwhile (validation, sync hooks and transforms, ``toModelOutput``
    callables). On a private loop of the sync API nothing else runs: ``fn`` runs in place.
    :class:`Saturated` when every worker slot is taken.
    """
    if owns_running_loop():
        return fn(*args)
    result: T = await _on_worker(lambda: fn(*args), name, lambda: None)
    return result


async def in_task(awaitable: Awaitable[T]) -> T:
    """Await user code (an async hook, approver, ``on_suspend``) as a task of its own: it then
    has a current task (``asyncio.timeout`` needs one) however the pipeline was started."""
    import asyncio

    running_loop()
    return await asyncio.ensure_future(awaitable)


def invoke_sync(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    timeout: float | None,
    abort: AbortSignal,
    name: str = "toolctl-handler",
) -> Any:
    """:func:`invoke` from synchronous code (the isolated child process)."""
    from toolctl.runtime.sync import run_sync

    return run_sync(invoke(fn, args, timeout, abort, in_place=True, name=name))


async def _await_task(task: asyncio.Future[Any], timeout: float | None, abort: AbortSignal) -> Any:
    import asyncio

    try:
        done, _ = await asyncio.wait({task}, timeout=timeout)
    except asyncio.CancelledError:
        abort.abort("cancelled")
        task.cancel()
        raise
    if done:
        return task.result()
    abort.abort("timeout")
    task.cancel()
    await asyncio.wait({task}, timeout=CANCEL_GRACE_S)
    # The run timed out at the deadline, whatever the coroutine does after cancellation.
    task.add_done_callback(_consume)
    raise HandlerTimeout(timeout or 0.0, None if task.done() else IGNORED_CANCEL_NOTE)


def _consume(task: asyncio.Future[Any]) -> None:
    if not task.cancelled():
        task.exception()
