"""WAL checkpoints of the SQLite run history, off the path of the calls.

SQLite's automatic checkpoint runs inside the commit that pushes the write-ahead log past its
limit: that one commit copies the log into the database and, with ``synchronous=NORMAL``, waits
for two fsyncs — milliseconds, paid by whichever call happened to commit, which is what a p99
latency measures. The store therefore raises that limit to a backstop
(:data:`AUTOCHECKPOINT_PAGES`) and asks for a checkpoint every :data:`EVERY_COMMITS` commits;
one daemon thread runs it on a connection of its own (``PRAGMA wal_checkpoint(PASSIVE)``, which
never blocks a writer), so commits keep appending to the log meanwhile. Durability is unchanged:
a commit is as durable as before when it returns; a checkpoint only moves committed pages.
"""

from __future__ import annotations

import logging
import os
import queue
import sqlite3
import threading

log = logging.getLogger("toolctl.runtime")

EVERY_COMMITS = 200  # about 700 pages of log for a small run's two writes
AUTOCHECKPOINT_PAGES = 4000  # the backstop, should the thread fall behind (or never run)

_pending: set[str] = set()
_jobs: queue.SimpleQueue[str] = queue.SimpleQueue()
_lock = threading.Lock()
_thread: threading.Thread | None = None


def request(path: str) -> None:
    """Checkpoint the history at ``path`` soon, on the checkpoint thread (once per request
    already waiting)."""
    global _thread
    with _lock:
        if path in _pending:
            return
        _pending.add(path)
        if _thread is None:
            _thread = threading.Thread(target=_run, name="toolctl-checkpoint", daemon=True)
            _thread.start()
    _jobs.put(path)


def checkpoint(path: str) -> None:
    """One passive checkpoint of ``path`` on a connection of its own (closed right after)."""
    from urllib.parse import quote

    # mode=rw: a history deleted meanwhile is not created again.
    db = sqlite3.connect(f"file:{quote(path)}?mode=rw", timeout=1.0, isolation_level=None, uri=True)
    try:
        db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    finally:
        db.close()


def _run() -> None:
    while True:
        path = _jobs.get()
        with _lock:
            _pending.discard(path)
        try:
            checkpoint(path)
        except sqlite3.Error as exc:  # the next write reports a broken history itself
            log.debug("could not checkpoint %s: %s", path, exc)


def _reset_after_fork() -> None:
    global _thread, _lock, _jobs
    _thread = None  # the child has no checkpoint thread
    _lock = threading.Lock()
    _jobs = queue.SimpleQueue()
    _pending.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_reset_after_fork)
