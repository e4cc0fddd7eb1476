"""Background runs: a detached worker process finishes the run; the caller gets the run id.

The run row is written as ``running`` (with the raw input, kept only until it ends) and owned by
the worker's pid from the moment it is spawned, so a worker that dies is swept to
``interrupted`` and never silently re-run.
"""

from __future__ import annotations

import contextlib
import subprocess
import sys
import threading
from typing import Any

from toolctl.runtime import jsondata
from toolctl.runtime.store import _start_time

SPAWN_LEASE_S = 24 * 3600.0

_children: list[subprocess.Popen[bytes]] = []


def spawn(store: Any, run_id: str, token: str, registry: dict[str, Any] | None) -> int:
    """Start ``python -m toolctl.runtime.worker`` for ``run_id``; return its pid."""
    from toolctl.runtime.errors import StateError

    if registry is None:
        raise StateError("a background run needs a registry loaded from a project directory")
    cmd = [
        sys.executable,
        "-m",
        "toolctl.runtime.worker",
        "--state",
        str(store.path),
        "--registry",
        jsondata.dumps(registry),
        run_id,
        token,
    ]
    proc = subprocess.Popen(
        cmd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
        close_fds=True,
        cwd=registry["root"],
    )
    store.update(run_id, expect_owner=token, owner_pid=proc.pid, owner_start=_start_time(proc.pid))
    # Reap the child when it ends so a long-lived caller collects no zombies.
    _children.append(proc)
    threading.Thread(target=_reap, args=(proc,), daemon=True).start()
    return proc.pid


def _reap(proc: subprocess.Popen[bytes]) -> None:
    proc.wait()
    with contextlib.suppress(ValueError):
        _children.remove(proc)
