"""Ending a whole process tree: a child subreaper on Linux, the process group elsewhere.

A process group is not enough: a handler's child can leave it (``setsid``, ``setpgid``) and a
double-forked daemon is re-parented to init, out of reach. On Linux the supervisor of an isolated
run marks itself a *child subreaper* (``prctl(PR_SET_CHILD_SUBREAPER)``, Linux 3.4+): every
orphan below it is re-parented to it instead of init, so the handler's whole tree stays its
descendants, found by their parent pids in ``/proc`` and killed generation by generation until
nothing is left. Where subreapers or ``/proc`` are missing (macOS, the BSDs) only the handler's
process group is killed, and a child that left the group survives.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
SWEEP_ROUNDS = 200  # bounds the sweep: each round kills what exists, then reaps what died


def _prctl(option: int, value: int) -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return bool(libc.prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):
        return False


def become_subreaper() -> bool:
    """Adopt every orphaned descendant of this process (Linux); False where unsupported."""
    return _prctl(PR_SET_CHILD_SUBREAPER, 1) and os.path.isdir("/proc/self")


def die_with_parent(sig: int, parent: int) -> None:
    """Get ``sig`` when the parent ends (Linux); exit at once if it has already ended."""
    _prctl(PR_SET_PDEATHSIG, sig)
    if os.getppid() != parent:
        os._exit(1)


def _parents() -> dict[int, tuple[int, bool]]:
    """pid → (parent pid, is a zombie) of every process visible in /proc."""
    found: dict[int, tuple[int, bool]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:  # ended meanwhile
            continue
        # "pid (comm) state ppid ...": comm may hold spaces and parentheses
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 1:
            found[int(name)] = (int(fields[1]), fields[0] == b"Z")
    return found


def descendants(root: int) -> dict[int, bool]:
    """Every process below ``root`` (from /proc): pid → is a zombie (ended, not reaped yet)."""
    table = _parents()
    children: dict[int, list[int]] = {}
    for pid, (ppid, _) in table.items():
        children.setdefault(ppid, []).append(pid)
    found: dict[int, bool] = {}
    todo = [root]
    while todo:
        for pid in children.get(todo.pop(), ()):
            found[pid] = table[pid][1]
            todo.append(pid)
    return found


def _has_children(me: int) -> bool:
    """Whether this (single-threaded) process has any child, without scanning all of /proc."""
    try:
        with open(f"/proc/{me}/task/{me}/children", "rb") as fh:
            return bool(fh.read().strip())
    except OSError:  # no CONFIG_PROC_CHILDREN: assume there may be, and scan
        return True


def kill_group(pgid: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signal.SIGKILL)


def reap_any() -> int:
    """Reap every child that has ended; how many were reaped."""
    reaped = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return reaped
        if pid == 0:
            return reaped
        reaped += 1


def end_descendants() -> set[int]:
    """SIGKILL every descendant of this subreaper and reap them; the pids that were running.

    Killing a process re-parents its children to us, so this goes round until no descendant is
    left (a process forked after a round is found in the next one).
    """
    me = os.getpid()
    seen: set[int] = set()
    if not _has_children(me) and reap_any() == 0:
        return seen  # the usual end: no child, so no descendant (each has a child as ancestor)
    for round_no in range(SWEEP_ROUNDS):
        alive = descendants(me)
        if not alive and reap_any() == 0:
            break
        for pid, zombie in alive.items():
            if not zombie:
                seen.add(pid)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        if reap_any() == 0 and alive:
            time.sleep(min(0.001 * (round_no + 1), 0.02))  # let the kernel finish the kills
    return seen
