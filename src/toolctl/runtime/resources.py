"""The process-wide resources of the runtime, owned by one :class:`Runtime` object.

A call needs a few things that outlive it and are shared by every call in the process: the
handler worker pool (:mod:`toolctl.runtime.execution.invoke`), the history writer and its timer
thread
(:mod:`toolctl.runtime.history.writer`), the lease heartbeat
(:mod:`toolctl.runtime.history.heartbeat`), the
SQLite checkpoint thread (:mod:`toolctl.runtime.history.checkpoint`), each thread's private event
loop
(:mod:`toolctl.runtime.sync`), the open stores
(:func:`toolctl.runtime.history.sqlite.open_store`) and the
local background workers it started, reaped as they end
(:mod:`toolctl.runtime.execution.background`).
They belong to a :class:`Runtime`, which makes each lazily (no thread starts before it is
needed) and releases them all in :meth:`Runtime.close`.

The Python API uses a default runtime, made on first use (:func:`current`). Tests, and
embedders that want their own limits or an explicit shutdown, make one and install it with
:func:`use`. A forked child starts with no runtime (none of its parent's threads exist there):
its first call makes a fresh default.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolctl.runtime.execution.background import WorkerProcesses
    from toolctl.runtime.execution.invoke import HandlerPool
    from toolctl.runtime.history.checkpoint import Checkpointer
    from toolctl.runtime.history.heartbeat import Heartbeat
    from toolctl.runtime.history.memory import MemoryStore
    from toolctl.runtime.history.records import RunStore
    from toolctl.runtime.history.writer import HistoryWriter
    from toolctl.runtime.memo import PerObject
    from toolctl.runtime.ratelimit import LocalBucketsByStore
    from toolctl.runtime.source import ToolSource
    from toolctl.runtime.sync import Loops


class Runtime:
    """The handler pool, history writer, heartbeat, checkpoint thread, per-thread loops, open
    stores and local background workers of one process (or of one test).

    ``handler_threads``: how many handlers may run in threads at once (beyond that a call is
    refused, never queued); ``lease``: the lease of a run executed on a shared history, in
    seconds (default: ``TOOLCTL_LEASE``, else 60).
    """

    def __init__(self, *, handler_threads: int | None = None, lease: float | None = None) -> None:
        from toolctl.runtime.execution.background import WorkerProcesses
        from toolctl.runtime.execution.invoke import MAX_THREADS, HandlerPool
        from toolctl.runtime.history.checkpoint import Checkpointer
        from toolctl.runtime.history.heartbeat import Heartbeat
        from toolctl.runtime.history.memory import MemoryStore
        from toolctl.runtime.history.writer import HistoryWriter
        from toolctl.runtime.ratelimit import LocalBucketsByStore
        from toolctl.runtime.sync import Loops

        self.handler_pool: HandlerPool = HandlerPool(
            MAX_THREADS if handler_threads is None else handler_threads
        )
        self.history: HistoryWriter = HistoryWriter()
        self.heartbeat: Heartbeat = Heartbeat(lease)
        self.checkpoints: Checkpointer = Checkpointer()
        self.loops: Loops = Loops()
        self.stores = StoreCache()
        self.memory: MemoryStore = MemoryStore()  # the history-off store (store=False)
        # rate-limit buckets of the stores that keep them in process (limits.callsPerMinute)
        self.rate_buckets: LocalBucketsByStore = LocalBucketsByStore()
        self.workers: WorkerProcesses = WorkerProcesses()  # local background workers, reaped
        self.closed = False

    def default_store(self, registry: ToolSource) -> RunStore:
        """The registry's own history (``state:``), opened once per registry object."""
        return self.stores.for_registry(registry)

    def close(self) -> None:
        """Stop the threads (writes already handed to the history writer are made first) and
        close the stores it opened. Handlers still running in threads finish on their own."""
        if self.closed:
            return
        self.closed = True
        self.history.close()
        self.heartbeat.close()
        self.checkpoints.close()
        self.stores.close()
        self.workers.close()
        _forget(self)

    def __enter__(self) -> Runtime:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class StoreCache:
    """The stores a runtime opened, one per location (every call on a history shares it)."""

    def __init__(self) -> None:
        from toolctl.runtime.memo import PerObject

        self._open: dict[str, RunStore] = {}
        self._lock = threading.Lock()
        # Once per registry: path resolution costs more than the rest of a call.
        self._by_registry: PerObject[ToolSource, RunStore] = PerObject(
            self._open_default, limit=256
        )

    def get(self, key: str, make: Callable[[], RunStore]) -> RunStore:
        """The store opened for ``key``, opened with ``make`` the first time."""
        with self._lock:
            store = self._open.get(key)
            if store is None:
                store = self._open[key] = make()
            return store

    def for_registry(self, registry: ToolSource) -> RunStore:
        return self._by_registry(registry)

    @staticmethod
    def _open_default(registry: ToolSource) -> RunStore:
        from toolctl.runtime.history.sqlite import open_store

        return open_store(None, registry)

    def close(self) -> None:
        with self._lock:
            stores, self._open = list(self._open.values()), {}
        for store in stores:
            with contextlib.suppress(Exception):  # closing one must not fail the shutdown
                store.close()


_current: Runtime | None = None
_lock = threading.Lock()


def current() -> Runtime:
    """The runtime calls use: the one installed with :func:`use`, else the process default
    (made on first use)."""
    rt = _current
    if rt is None:
        with _lock:
            rt = _current
            if rt is None:
                rt = Runtime()
                _install(rt)
    return rt


def _install(rt: Runtime | None) -> None:
    global _current
    _current = rt


@contextlib.contextmanager
def use(rt: Runtime) -> Iterator[Runtime]:
    """Inside the block, calls in this process use ``rt`` (tests build their own); then the
    runtime before it is back. ``rt`` is not closed."""
    before = _current
    _install(rt)
    try:
        yield rt
    finally:
        _install(before)


def _forget(rt: Runtime) -> None:
    """A closed runtime is no longer current: the next call makes a fresh default."""
    global _current
    with _lock:
        if _current is rt:
            _current = None


def _after_fork_in_child() -> None:
    global _current, _lock
    _current = None  # the child has none of the parent's threads, loops or connections
    _lock = threading.Lock()  # another thread may have held it at the fork


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
