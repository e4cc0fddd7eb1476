"""Calling a handler: sync or async, with or without a context, with a timeout that tells the truth.

* A sync handler called from sync code without a timeout runs right here (the fast path).
* With a timeout (or from async code) a sync handler runs on a worker of a small reusable pool
  of daemon threads (starting a thread per call costs more than a trivial call). Python cannot
  stop a thread: at the deadline the run ends as ``timed_out``, the abort signal is set, and the
  note says the handler may still be running. Its worker stays taken until the handler returns;
  when every worker is taken (``MAX_THREADS``) a new call is refused at once with
  :class:`Saturated` instead of waiting behind stuck calls. Daemon workers never hold up
  interpreter exit.
* An async handler runs as a task; at the deadline it is cancelled and the run is ``timed_out``
  even if the coroutine swallows the cancellation.
* ``isolation: subprocess`` (see :mod:`toolctl.runtime.isolation`) is the way to really stop work.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import functools
import inspect
import os
import queue
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from toolctl.runtime.context import AbortSignal

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


class Saturated(Exception):
    """Every handler worker is busy (stuck calls); refuse instead of queueing."""


class _Pool:
    """Reusable daemon worker threads, at most ``MAX_THREADS`` busy at once.

    A job is handed to an idle worker through one shared queue; with no idle worker a new one
    starts, up to the limit; beyond it :meth:`submit` raises :class:`Saturated`. A job never
    waits in the queue without a worker already reserved for it.
    """

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self.live = 0  # workers alive, busy or idle
        self.idle = 0

    @property
    def busy(self) -> int:
        return self.live - self.idle

    def submit(self, job: Callable[[], None]) -> None:
        with self._lock:
            busy = self.live - self.idle
            if busy >= MAX_THREADS:
                raise Saturated(
                    f"{busy} tool calls are still running in threads (limit "
                    f"{MAX_THREADS}); try again later"
                )
            if self.idle:
                self.idle -= 1  # reserved: some idle worker takes this job
                self._jobs.put(job)
                return
            self.live += 1
        try:
            worker = threading.Thread(
                target=self._work, args=(job,), name="toolctl-worker", daemon=True
            )
            worker.start()
        except BaseException:
            with self._lock:
                self.live -= 1
            raise

    def _work(self, job: Callable[[], None] | None) -> None:
        while job is not None:
            job()
            job = None
            with self._lock:
                self.idle += 1
            try:
                job = self._jobs.get(timeout=IDLE_EXIT_S)
            except queue.Empty:
                with self._lock:
                    # A job put while we timed out was reserved for an idle worker: take it.
                    try:
                        job = self._jobs.get_nowait()
                    except queue.Empty:
                        self.idle -= 1
                        self.live -= 1

    def reset(self) -> None:
        """After ``fork``: the child has none of the parent's threads."""
        self.__init__()  # type: ignore[misc]


_pool = _Pool()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_pool.reset)


def busy_workers() -> int:
    """How many handler workers are running a handler right now (stuck ones included)."""
    return _pool.busy


@functools.lru_cache(maxsize=1024)
def wants_context(fn: Callable[..., Any]) -> bool:
    """True when ``fn`` takes a second positional argument (the :class:`ToolContext`)."""
    try:
        params = list(inspect.signature(fn).parameters.values())
    except (TypeError, ValueError):
        return False
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 2 or any(p.kind is p.VAR_POSITIONAL for p in params)


def is_async(fn: Callable[..., Any]) -> bool:
    # A callable object with ``async def __call__`` is async too.
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        type(fn).__call__ if not inspect.isroutine(fn) else None
    )


def run_blocking(awaitable: Awaitable[Any]) -> Any:
    """Run an awaitable to completion from sync code (on a worker if a loop is running)."""

    async def main() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    fut = _start_thread(lambda: main(), "toolctl-await")
    return fut.result()


def _complete(call: Callable[[], Any]) -> Any:
    result = call()
    if inspect.isawaitable(result):
        result = asyncio.run(_wrap(result))
    return result


def _named(name: str, call: Callable[[], Any]) -> Any:
    # The worker carries the run's name while it runs it (thread dumps, py-spy).
    thread = threading.current_thread()
    thread.name = name
    try:
        return _complete(call)
    finally:
        thread.name = "toolctl-worker"


def _start_thread(call: Callable[[], Any], name: str) -> concurrent.futures.Future[Any]:
    """Run ``call`` on a pool worker; its outcome in a concurrent future."""
    fut: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def job() -> None:
        if not fut.set_running_or_notify_cancel():
            return
        try:
            fut.set_result(_named(name, call))
        except BaseException as exc:  # SuspendRequested and KeyboardInterrupt travel too
            fut.set_exception(exc)

    _pool.submit(job)
    return fut


def _start_on_loop(call: Callable[[], Any], name: str) -> asyncio.Future[Any]:
    """Run ``call`` on a pool worker; its outcome in a future of the running loop (one
    thread-safe wake-up, no chained concurrent future)."""
    loop = asyncio.get_running_loop()
    afut: asyncio.Future[Any] = loop.create_future()
    _pool.submit(settling_job(loop, afut, lambda: _named(name, call)))
    return afut


def settling_job(
    loop: asyncio.AbstractEventLoop, afut: asyncio.Future[Any], call: Callable[[], Any]
) -> Callable[[], None]:
    """A job for another thread: run ``call``, then settle ``afut`` on ``loop`` with its
    outcome (skipped when ``afut`` was cancelled before the job started)."""

    def job() -> None:
        if afut.cancelled():
            return
        try:
            value, error = call(), None
        except BaseException as exc:  # SuspendRequested and KeyboardInterrupt travel too
            value, error = None, exc
        # The loop may be gone: then nobody waits for this (timed-out) call any more.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(_settle, afut, value, error)

    return job


def _settle(afut: asyncio.Future[Any], value: Any, error: BaseException | None) -> None:
    if afut.done():
        return
    if error is None:
        afut.set_result(value)
    else:
        afut.set_exception(error)


async def _wrap(awaitable: Awaitable[Any]) -> Any:
    return await awaitable


def invoke_sync(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    timeout: float | None,
    abort: AbortSignal,
    name: str = "toolctl-handler",
) -> Any:
    """Call ``fn(*args)`` from sync code; :class:`HandlerTimeout` past ``timeout``."""
    if timeout is None:
        result = fn(*args)
        return run_blocking(result) if inspect.isawaitable(result) else result
    fut = _start_thread(lambda: fn(*args), name)
    try:
        return fut.result(timeout)
    except concurrent.futures.TimeoutError:
        abort.abort("timeout")
        raise HandlerTimeout(timeout, IN_PROCESS_NOTE) from None
    except KeyboardInterrupt:
        abort.abort("cancelled")
        raise


async def invoke_async(
    fn: Callable[..., Any],
    args: tuple[Any, ...],
    timeout: float | None,
    abort: AbortSignal,
    name: str = "toolctl-handler",
) -> Any:
    """Call ``fn(*args)`` from async code without blocking the event loop."""
    if is_async(fn):
        return await _await_task(asyncio.ensure_future(fn(*args)), timeout, abort)
    afut = _start_on_loop(lambda: fn(*args), name)
    if timeout is None:
        try:
            return await afut
        except asyncio.CancelledError:
            abort.abort("cancelled")
            raise
    try:
        done, _ = await asyncio.wait({afut}, timeout=timeout)
    except asyncio.CancelledError:
        abort.abort("cancelled")
        afut.cancel()
        raise
    if not done:
        abort.abort("timeout")
        afut.cancel()
        raise HandlerTimeout(timeout or 0.0, IN_PROCESS_NOTE)
    return afut.result()


async def _await_task(task: asyncio.Future[Any], timeout: float | None, abort: AbortSignal) -> Any:
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
