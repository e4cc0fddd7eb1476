"""Background runs: a detached worker process finishes the run; the caller gets the run id.

The worker's own stdout/stderr (a crash before it could record anything, say) go to
``workers/<run id>.log`` next to the state file; the log is removed when the worker ends cleanly.

The run row is written as ``running`` (with the raw input, kept only until it ends) and owned by
the worker's pid from the moment it is spawned, so a worker that dies is swept to
``interrupted`` and never silently re-run.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolctl.runtime.history.records import RunStore

from toolctl.runtime import jsondata
from toolctl.runtime.history.ownership import start_time
from toolctl.runtime.resources import current

SPAWN_LEASE_S = 24 * 3600.0


def spawn(
    store: RunStore,
    run_id: str,
    token: str,
    registry: dict[str, Any] | None,
    *,
    idempotent: bool = False,
) -> int:
    """Start the run's worker: with a PostgreSQL history, a job on the task queue that any
    ``toolctl worker`` takes (:mod:`toolctl.runtime.history.queue`; returns the job id); otherwise a
    detached ``python -m toolctl.worker.local`` process on this machine (returns its pid)."""
    from toolctl.runtime.errors import StateError

    if registry is None:
        raise StateError("a background run needs a registry loaded from a project directory")
    if store.capabilities.queue is not None:
        from toolctl.runtime.history import queue

        return queue.enqueue(store, run_id, token, {**registry, "idempotent": idempotent})
    if store.path is None:
        raise StateError("a background run needs a run history file (not an in-memory store)")
    state = store.path
    cmd = [
        sys.executable,
        "-m",
        "toolctl.worker.local",
        "--state",
        str(state),
        "--registry",
        jsondata.dumps(registry),
        run_id,
        token,
    ]
    # The worker imports toolctl the way this process did, installed or not.
    here = str(Path(__file__).resolve().parents[3])  # src/ (toolctl/runtime/execution/...)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [here, env.get("PYTHONPATH")]))
    log = log_path(state, run_id)
    log.parent.mkdir(mode=0o700, exist_ok=True)
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        proc = subprocess.Popen(
            cmd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=fd,
            stderr=fd,
            start_new_session=True,
            close_fds=True,
            cwd=registry["root"],
        )
    finally:
        os.close(fd)
    store.update(run_id, expect_owner=token, owner_pid=proc.pid, owner_start=start_time(proc.pid))
    current().workers.add(proc)
    return proc.pid


def log_path(state: Path | str, run_id: str) -> Path:
    """Where a worker's own output goes (removed when the worker ends cleanly)."""
    return Path(state).parent / "workers" / f"{run_id}.log"


class WorkerProcesses:
    """The local worker processes a :class:`~toolctl.runtime.resources.Runtime` started, each
    reaped when it ends (by a daemon thread waiting on it) so a long-lived caller collects no
    zombies. The workers are detached: closing the runtime leaves them running their runs."""

    def __init__(self) -> None:
        self._running: list[subprocess.Popen[bytes]] = []
        self._lock = threading.Lock()

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        """Reap ``proc`` when it ends."""
        with self._lock:
            self._running.append(proc)
        threading.Thread(target=self._reap, args=(proc,), name="toolctl-reap", daemon=True).start()

    def running(self) -> list[int]:
        """The pids of the workers started here that have not ended yet."""
        with self._lock:
            return [proc.pid for proc in self._running]

    def close(self) -> None:
        """Stop tracking the workers (each reaper thread still collects its worker's exit)."""
        with self._lock:
            self._running.clear()

    def _reap(self, proc: subprocess.Popen[bytes]) -> None:
        proc.wait()
        with self._lock, contextlib.suppress(ValueError):
            self._running.remove(proc)
