"""Run-history writes from async code: off the event loop whenever other calls are running.

A write to the SQLite history is short but touches the disk; done on the event-loop thread it
stalls every other call served by that loop. :func:`write` runs it on a one-thread
``ThreadPoolExecutor`` (SQLite takes one writer at a time anyway, and one thread keeps the
writes in order) while other async calls are in flight, and awaits it, so a call still returns
only after its row is committed. When this call is the only one running, or it runs on the
private loop of the synchronous API, there is nobody to stall: the write runs in place.
"""

from __future__ import annotations

import contextlib
import logging
import os
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, TypeVar

from toolctl.runtime.sync import owns_running_loop

if TYPE_CHECKING:  # imported when first needed: a synchronous call writes in place
    import concurrent.futures

T = TypeVar("T")
log = logging.getLogger("toolctl.runtime")

_writer: concurrent.futures.ThreadPoolExecutor | None = None
_active = 0


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _writer
    if _writer is None:
        import concurrent.futures

        _writer = concurrent.futures.ThreadPoolExecutor(1, "toolctl-history")
    return _writer


def _reset_after_fork() -> None:
    global _writer
    _writer = None  # the child has no writer thread


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


async def write(fn: Callable[[], T], *, if_cancelled: Callable[[], object] | None = None) -> T:
    """Run the history write ``fn`` and return its value: in place when no other async call is
    in flight, else on the writer thread (awaited: the row is committed when this returns).

    Once handed over the write happens even if the caller is cancelled meanwhile; then
    ``if_cancelled`` runs on the writer right after it (to record the cancellation).
    """
    if _active <= 1 or owns_running_loop():
        return fn()
    import asyncio

    writer = _executor()
    try:
        return await asyncio.shield(asyncio.wrap_future(writer.submit(fn)))
    except asyncio.CancelledError:
        if if_cancelled is not None:
            writer.submit(_logged, if_cancelled)
        raise


def _logged(fn: Callable[[], object]) -> None:
    try:
        fn()
    except Exception:  # nobody awaits this write: the log is where its failure shows
        log.exception("could not record a cancelled run")
