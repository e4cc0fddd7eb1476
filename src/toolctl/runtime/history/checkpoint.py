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
import queue
import sqlite3
import threading

log = logging.getLogger("toolctl.runtime")

EVERY_COMMITS = 200  # about 700 pages of log for a small run's two writes
AUTOCHECKPOINT_PAGES = 4000  # the backstop, should the thread fall behind (or never run)


class Checkpointer:
    """The checkpoint thread of a :class:`~toolctl.runtime.resources.Runtime` (started on the
    first request)."""

    def __init__(self) -> None:
        self._pending: set[str] = set()
        self._jobs: queue.SimpleQueue[str | None] = queue.SimpleQueue()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None

    def request(self, path: str) -> None:
        """Checkpoint the history at ``path`` soon, on the checkpoint thread (once per request
        already waiting)."""
        with self._lock:
            if path in self._pending:
                return
            self._pending.add(path)
            if self._thread is None:
                self._thread = threading.Thread(
                    target=self._run, name="toolctl-checkpoint", daemon=True
                )
                self._thread.start()
        self._jobs.put(path)

    def close(self) -> None:
        """Stop the thread after the checkpoints already asked for."""
        with self._lock:
            thread, self._thread = self._thread, None
        if thread is not None:
            self._jobs.put(None)
            thread.join(timeout=10)

    def _run(self) -> None:
        while True:
            path = self._jobs.get()
            if path is None:
                return
            with self._lock:
                self._pending.discard(path)
            try:
                checkpoint(path)
            except sqlite3.Error as exc:  # the next write reports a broken history itself
                log.debug("could not checkpoint %s: %s", path, exc)


def request(path: str) -> None:
    """Checkpoint the history at ``path`` soon, on the current runtime's checkpoint thread."""
    from toolctl.runtime.resources import current

    current().checkpoints.request(path)


def checkpoint(path: str) -> None:
    """One passive checkpoint of ``path`` on a connection of its own (closed right after)."""
    from urllib.parse import quote

    # mode=rw: a history deleted meanwhile is not created again.
    db = sqlite3.connect(f"file:{quote(path)}?mode=rw", timeout=1.0, isolation_level=None, uri=True)
    try:
        db.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
    finally:
        db.close()
