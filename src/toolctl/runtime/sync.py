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
their own (:func:`toolctl.runtime.invoke.in_task`), so they always have a current task.

Nobody else runs on a private loop, so the pipeline may run a sync handler and its history
writes in place there (:func:`owns_running_loop`).

Called from code that already runs an event loop (a handler calling ``registry.call``), the
coroutine runs on a short-lived helper thread with its own private loop: a running loop cannot
be re-entered.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import os
import threading
import types
from collections.abc import Callable, Coroutine, Generator
from typing import Any, TypeVar

T = TypeVar("T")


class _Loop:
    """A thread's private loop; closed when the thread (and so this holder) goes away."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.loop._toolctl_private = True  # type: ignore[attr-defined]

    def __del__(self) -> None:
        with contextlib.suppress(Exception):
            self.loop.close()


class _Local(threading.local):
    holder: _Loop | None = None


_local = _Local()


def _reset_after_fork() -> None:
    global _local
    _local = _Local()  # the child must not reuse the parent's selector


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)


def owns_running_loop() -> bool:
    """True when the running loop is a private loop of :func:`run_sync` (nothing else runs on
    it, so blocking it stalls nobody)."""
    loop = asyncio.events._get_running_loop()
    return getattr(loop, "_toolctl_private", False) is True


def run_sync(
    coro: Coroutine[Any, Any, T], on_interrupt: Callable[[], BaseException] | None = None
) -> T:
    """Run ``coro`` to completion from synchronous code and return its value.

    Ctrl-C while it waits cancels it (it records what it must) and then raises
    ``on_interrupt()`` (default: the ``KeyboardInterrupt``).
    """
    if asyncio.events._get_running_loop() is not None:
        with concurrent.futures.ThreadPoolExecutor(1, "toolctl-sync") as helper:
            return helper.submit(_run_here, coro, on_interrupt).result()
    return _run_here(coro, on_interrupt)


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
    holder = _local.holder
    if holder is None or holder.loop.is_closed():
        holder = _local.holder = _Loop()
    loop = holder.loop
    # The eager first step: with the loop set as running (get_running_loop() works), but no
    # task: user coroutines run in tasks of their own (see invoke.in_task).
    asyncio.events._set_running_loop(loop)
    try:
        pending = coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    finally:
        asyncio.events._set_running_loop(None)
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
