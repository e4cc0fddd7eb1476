"""Who owns a run: the claiming process's identity, its lease, and whether it is still alive.

A run being executed carries its owner (a token, pid, host and the pid's kernel start time, so a
reused pid is not mistaken for the original) and a lease. The sweep marks a ``running`` run whose
owner is gone as ``interrupted``; it is never re-run. An owner on the sweeping process's host is
judged by its pid; one on another host only by its lease, which is why a run on a store shared
by several machines holds a short lease that :mod:`toolctl.runtime.history.heartbeat` renews.
"""

from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any

from toolctl.runtime.result import ErrorCode, RunStatus

if TYPE_CHECKING:
    from toolctl.runtime.history.records import RowChanges, RunRecord

# A run on a shared (PostgreSQL) history: renewed every third of it by the heartbeat, so a run of
# a process that died is seen as lost from another host at most this long after its last renewal.
LEASE_S = 60.0
LEASE_ENV = "TOOLCTL_LEASE"  # overrides LEASE_S (seconds) for the calls of this process
# A run on a one-machine history (SQLite): never renewed, so it covers the whole run — the tool's
# timeout plus this margin, or a day without a timeout. Only read from another host (containers
# sharing a volume); on the same host the owner's pid tells.
TIMEOUT_MARGIN_S = 60.0
DEFAULT_LEASE_S = 24 * 3600.0


def start_time(pid: int) -> str | None:
    """The kernel's start time of ``pid`` (Linux), to tell a reused pid from the original."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            data = fh.read().decode("ascii", "replace")
    except OSError:
        return None
    return data.rsplit(")", 1)[-1].split()[19]


def _hostname() -> str:
    """``socket.gethostname()``: on POSIX the kernel's node name, read without importing socket
    (a millisecond of every ``toolctl run``)."""
    if hasattr(os, "uname"):
        return os.uname().nodename
    import socket

    return socket.gethostname()


HOST = _hostname()
_SELF: dict[int, str | None] = {}


def _own_start_time() -> str | None:
    pid = os.getpid()
    if pid not in _SELF:
        _SELF[pid] = start_time(pid)
    return _SELF[pid]


def owner_fields(owner: str, lease: float | None = None) -> RowChanges:
    """Columns that claim a run for this process."""
    pid = os.getpid()
    return {
        "owner": owner,
        "owner_pid": pid,
        "owner_host": HOST,
        "owner_start": _own_start_time(),
        "lease_expires": time.time() + (lease if lease is not None else DEFAULT_LEASE_S),
    }


def owner_alive(rec: RunRecord, now: float) -> bool:
    if rec.owner_host != HOST or rec.owner_pid is None:
        # Another machine: only its lease can tell.
        return rec.lease_expires is None or rec.lease_expires > now
    try:
        os.kill(rec.owner_pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass
    if rec.owner_start is not None:
        current = start_time(rec.owner_pid)
        if current is not None and current != rec.owner_start:
            return False  # the pid was reused by another process
        if current is None:
            return False
    state = _proc_state(rec.owner_pid)
    return state not in ("Z", "X")


def _proc_state(pid: int) -> str | None:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            return fh.read().decode("ascii", "replace").rsplit(")", 1)[-1].split()[0]
    except OSError:
        return None


INTERRUPTED_ERROR = {
    "code": ErrorCode.INTERRUPTED.value,
    "message": "the process running this tool ended before the run finished; it was not re-run",
    "details": [],
}


def end_changes(status: RunStatus, error: dict[str, Any], now: float) -> RowChanges:
    """The row changes that end a pending run as ``status``: its raw input and context (kept
    only for a run that will continue) are dropped, and nobody owns it any more."""
    return {
        "status": status.value,
        "ended_at": now,
        "error": error,
        "raw_input": None,
        "raw_context": None,
        "raw_resume": None,
        "owner": None,
    }


def interrupt_changes(now: float) -> RowChanges:
    """:func:`end_changes` for a run whose process died (``interrupted``)."""
    return end_changes(RunStatus.INTERRUPTED, INTERRUPTED_ERROR, now)
