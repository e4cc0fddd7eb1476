"""Calling a handler: sync or async, with or without a context, with a timeout that tells the truth.

* A sync handler called from sync code without a timeout runs right here (the fast path).
* With a timeout (or from async code) a sync handler runs in a daemon thread. Python cannot stop a
  thread: at the deadline the run ends as ``timed_out``, the abort signal is set, and the note says
  the handler may still be running. A daemon thread never holds up interpreter exit.
* An async handler runs as a task; at the deadline it is cancelled and the run is ``timed_out``
  even if the coroutine swallows the cancellation.
* ``isolation: subprocess`` (see :mod:`toolctl.runtime.isolation`) is the way to really stop work.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import inspect
import threading
from collections.abc import Awaitable, Callable
from typing import Any

from toolctl.runtime.context import AbortSignal

MAX_THREADS = 32
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
    """Too many handler threads are still running (stuck calls); refuse instead of queueing."""


_live = 0
_live_lock = threading.Lock()


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
    """Run an awaitable to completion from sync code (in a helper thread if a loop is running)."""

    async def main() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(main())
    fut = _start_thread(lambda: main(), "toolctl-await")
    return fut.result()


def _start_thread(call: Callable[[], Any], name: str) -> concurrent.futures.Future[Any]:
    global _live
    with _live_lock:
        if _live >= MAX_THREADS:
            raise Saturated(
                f"{_live} tool calls are still running in threads (limit "
                f"{MAX_THREADS}); try again later"
            )
        _live += 1
    fut: concurrent.futures.Future[Any] = concurrent.futures.Future()

    def target() -> None:
        global _live
        try:
            fut.set_running_or_notify_cancel()
            result = call()
            if inspect.isawaitable(result):
                result = asyncio.run(_wrap(result))
            fut.set_result(result)
        except BaseException as exc:  # SuspendRequested and KeyboardInterrupt travel too
            if not fut.cancelled():
                fut.set_exception(exc)
        finally:
            with _live_lock:
                _live -= 1

    threading.Thread(target=target, name=name, daemon=True).start()
    return fut


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
    afut = asyncio.wrap_future(_start_thread(lambda: fn(*args), name))
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
