"""Child processes for the PostgreSQL tests: ``toolctl`` commands and ``toolctl worker``
processes on one state URL, each checked never to print the cluster's password."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from bench import pgcluster

SRC = str(Path(__file__).resolve().parents[2] / "src")


def env(root: Path, url: str) -> dict[str, str]:
    """The environment of a child: the state URL, this checkout's sources, the handlers'
    marker folder (``<root>/marks``)."""
    return {
        **os.environ,
        "TOOLCTL_STATE": url,
        "PYTHONPATH": SRC,
        "NO_COLOR": "1",
        "MARKS": str(root / "marks"),
    }


def toolctl(root: Path, url: str, *args: str, expect: int = 0) -> subprocess.CompletedProcess[str]:
    """Run ``toolctl ARGS`` in ``root``; assert its exit code and that no password leaked."""
    done = subprocess.run(
        [sys.executable, "-m", "toolctl", *args],
        cwd=root,
        env=env(root, url),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == expect, done.stdout + done.stderr
    assert pgcluster.PASSWORD not in done.stdout + done.stderr
    return done


def start_worker(root: Path, url: str) -> subprocess.Popen[bytes]:
    """A ``toolctl worker`` with a short lease, in its own process group (see :func:`kill`)."""
    return subprocess.Popen(
        [sys.executable, "-m", "toolctl", "worker", "--lease", "2", "--concurrency", "2"],
        cwd=root,
        env=env(root, url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def kill(proc: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
    """SIGKILL ``proc``'s process group (handlers included) if it still runs, and reap it."""
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


@contextlib.contextmanager
def worker(root: Path, url: str) -> Iterator[subprocess.Popen[bytes]]:
    """A worker for the ``with`` block, killed at its end."""
    proc = start_worker(root, url)
    try:
        yield proc
    finally:
        kill(proc)
