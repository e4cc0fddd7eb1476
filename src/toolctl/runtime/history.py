"""Run-history writes from async code: off the event loop whenever other calls are running.

A write to the SQLite history is short but touches the disk; done on the event-loop thread it
stalls every other call served by that loop. :func:`write` runs it on one writer thread (SQLite
takes one writer at a time anyway) while other async calls are in flight, and awaits it, so a
call still returns only after its row is committed. When this call is the only one running
there is nobody to stall, and the write runs in place (no thread hop on the way).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import logging
import os
import queue
import threading
from collections.abc import Callable, Iterator
from typing import TypeVar

from toolctl.runtime.invoke import settling_job

T = TypeVar("T")
log = logging.getLogger("toolctl.runtime")

_Job = Callable[[], None]


class _Writer:
    """One daemon thread that runs history writes in order."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[_Job] = queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def submit(self, fn: Callable[[], T]) -> asyncio.Future[T]:
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[T] = loop.create_future()
        job = settling_job(loop, fut, fn)
        self.put(job)
        return fut

    def put(self, job: _Job) -> None:
        """Queue ``job`` behind every write handed over before it."""
        self._ensure_thread()
        self._jobs.put(job)

    def _ensure_thread(self) -> None:
        if self._thread is not None:
            return
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="toolctl-history", daemon=True
                )
                self._thread.start()

    def _run(self) -> None:
        while True:
            self._jobs.get()()

    def reset(self) -> None:
        """After ``fork``: the child has no writer thread."""
        self.__init__()  # type: ignore[misc]


_writer = _Writer()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_writer.reset)
_active = 0


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
    if _active <= 1:
        return fn()
    try:
        return await asyncio.shield(_writer.submit(fn))
    except asyncio.CancelledError:
        if if_cancelled is not None:
            _writer.put(functools.partial(_logged, if_cancelled))
        raise


def _logged(fn: Callable[[], object]) -> None:
    try:
        fn()
    except Exception:  # nobody awaits this write: the log is where its failure shows
        log.exception("could not record a cancelled run")
