"""The one bridge from synchronous code into the async call pipeline: :func:`run_sync`.

The pipeline is a coroutine. The synchronous API (``registry.call``, ``approve``, ``resume``,
``InputStream.feed``, the background worker) runs it on a private event loop kept per thread
and reused from call to call (``asyncio.run`` makes a new loop, executor and signal set-up per
call: tens of microseconds, more than a whole call's budget in ``bench/bench_call.py``).

It starts eagerly, the way Python 3.12's eager tasks do: its first step runs at once, in place,
with the private loop set as the running loop, and most calls (a sync handler without a
timeout) finish in that step without a task or a turn of the loop (creating a task alone costs
more than the rest of such a call). A coroutine that really waits continues as a task of the
loop, with ``loop.run_until_complete``. User coroutines the pipeline awaits run in tasks of
their own (:func:`toolctl.runtime.execution.invoke.in_task`), so they always have a current task.

Nobody else runs on a private loop, so the pipeline may run a sync handler and its history
writes in place there (:func:`owns_running_loop`).

Called from code that already runs an event loop (a handler calling ``registry.call``), the
coroutine runs on a short-lived helper thread with its own private loop: a running loop cannot
be re-entered.

asyncio itself (with ssl, a fifth of ``toolctl run``'s start-up) is imported only when something
needs a loop: the eager first step starts without one, and code that needs the loop asks
:func:`running_loop`, which then creates the private loop and sets it running for the rest of
the step. A call that needs no loop (a sync handler without a timeout) never imports asyncio.
"""

from __future__ import annotations

import contextlib
import os
import sys
import threading
import types
from collections.abc import Callable, Coroutine, Generator
from typing import TYPE_CHECKING, Any, TypeVar

from toolctl.runtime.resources import current

if TYPE_CHECKING:
    import asyncio

T = TypeVar("T")


class _Loop:
    """A thread's private loop; closed when the thread (and so this holder) goes away."""

    def __init__(self) -> None:
        import asyncio

        self.loop = asyncio.new_event_loop()
        self.loop._toolctl_private = True  # type: ignore[attr-defined]
        self.pid = os.getpid()

    def __del__(self, getpid: Callable[[], int] = os.getpid) -> None:
        # Not in a forked child: its copy shares the parent's epoll instance, and closing the
        # loop would unregister the parent's self-pipe from it (the parent's loop would then
        # stop hearing other threads, and a call with a timeout would wait all of it).
        # (getpid bound early, no contextlib: at interpreter exit, when the runtime that holds
        # this goes, this module's globals may be gone already.)
        if getpid() == self.pid:
            try:  # noqa: SIM105
                self.loop.close()
            except Exception:
                pass


class Loops(threading.local):
    """Each thread's private loop (a :class:`~toolctl.runtime.resources.Runtime` holds one;
    a forked child gets a new runtime, so it never reuses its parent's selector)."""

    holder: _Loop | None = None
    # In the eager first step of run_sync, before anything asked for the loop: the step owns
    # this thread as if the private loop were running (see running_loop).
    loopless: bool = False


def _loops() -> Loops:
    return current().loops


def _current_loop() -> asyncio.AbstractEventLoop | None:
    """The running loop, if any (none can run while asyncio is not even imported)."""
    asyncio = sys.modules.get("asyncio")
    return None if asyncio is None else asyncio.events._get_running_loop()


def owns_running_loop() -> bool:
    """True when the running loop is a private loop of :func:`run_sync` (nothing else runs on
    it, so blocking it stalls nobody), or would be (the eager step before it needed one)."""
    if _loops().loopless:
        return True
    return getattr(_current_loop(), "_toolctl_private", False) is True


def running_loop() -> asyncio.AbstractEventLoop:
    """The running loop (as ``asyncio.get_running_loop()``); in the eager first step of
    :func:`run_sync`, the thread's private loop, created and set running on first use."""
    import asyncio

    local = _loops()
    if local.loopless:
        local.loopless = False
        asyncio.events._set_running_loop(_private_loop(local))
    return asyncio.get_running_loop()


def cancelled_error() -> type[BaseException]:
    """``asyncio.CancelledError`` for an ``except`` clause; while asyncio is not imported nothing
    can be cancelled, and ``KeyboardInterrupt`` (always listed beside it) stands in."""
    asyncio = sys.modules.get("asyncio")
    return KeyboardInterrupt if asyncio is None else asyncio.CancelledError


def run_sync(
    coro: Coroutine[Any, Any, T], on_interrupt: Callable[[], BaseException] | None = None
) -> T:
    """Run ``coro`` to completion from synchronous code and return its value.

    Ctrl-C while it waits cancels it (it records what it must) and then raises
    ``on_interrupt()`` (default: the ``KeyboardInterrupt``).
    """
    if _loops().loopless or _current_loop() is not None:
        import concurrent.futures

        with concurrent.futures.ThreadPoolExecutor(1, "toolctl-sync") as helper:
            return helper.submit(_run_here, coro, on_interrupt).result()
    return _run_here(coro, on_interrupt)


def _private_loop(local: Loops) -> asyncio.AbstractEventLoop:
    holder = local.holder
    if holder is None or holder.loop.is_closed():
        holder = local.holder = _Loop()
    return holder.loop


@types.coroutine
def _continue(coro: Coroutine[Any, Any, T], pending: Any) -> Generator[Any, Any, T]:
    """The rest of ``coro``, whose first step already ran and is waiting on ``pending`` (what it
    yielded): hand ``pending`` to the task running this, then resume ``coro`` (``yield from``)."""
    while True:
        try:
            yield pending
        except BaseException as exc:  # cancellation (Ctrl-C) goes into the coroutine
            try:
                pending = coro.throw(exc)
            except StopIteration as done:
                return done.value  # type: ignore[no-any-return]
            continue
        return (yield from coro.__await__())


async def _finish(coro: Coroutine[Any, Any, T], pending: Any) -> T:
    return await _continue(coro, pending)


def _run_here(coro: Coroutine[Any, Any, T], on_interrupt: Callable[[], BaseException] | None) -> T:
    # The eager first step: no task (user coroutines run in tasks of their own, see
    # invoke.in_task) and no loop until running_loop() sets the private one running.
    local = _loops()
    local.loopless = True
    try:
        pending = coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    finally:
        if local.loopless:
            local.loopless = False
        else:
            sys.modules["asyncio"].events._set_running_loop(None)
    loop = _private_loop(local)
    task = loop.create_task(_finish(coro, pending))
    try:
        return loop.run_until_complete(task)
    except KeyboardInterrupt:
        if task.done():
            raise  # raised inside the pipeline, which has recorded the run
        # Raised while the loop waited: cancel the pipeline so it records the run, then report.
        task.cancel()
        with contextlib.suppress(BaseException):
            loop.run_until_complete(task)
        if on_interrupt is not None:
            raise on_interrupt() from None
        raise
