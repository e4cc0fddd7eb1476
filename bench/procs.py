"""Timing fresh processes for the start-up and cache benchmarks: wall time, CPU time, peak memory.

On a shared machine the wall time of a process includes waiting for a core; its CPU time (user
+ system, from ``wait4``) does not, so both are reported: ratios of CPU times stay meaningful
when other work competes for the cores.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

# (argv, env) for run number i (-1: the warm-up run)
Command = Callable[[int], tuple[list[str], dict[str, str]]]


@dataclass
class Sample:
    wall: float  # seconds
    cpu: float  # seconds, user + system
    peak: float  # MiB, ru_maxrss


def run_process(argv: list[str], env: dict[str, str], cwd: Path) -> Sample:
    """Run ``argv`` to completion; exit with its stderr if it fails."""
    # stderr to a file, not a pipe: a command that writes more than a pipe holds (a lint's
    # findings) would wait for a reader while this process waits for it to end
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=errors)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        errors.seek(0)
        stderr = errors.read().decode(errors="replace")
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode not in (0, 1):  # 1: findings (a lint warning is not a failure here)
        sys.exit(f"command failed ({proc.returncode}): {' '.join(argv)}\n{stderr}")
    return Sample(wall, usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024)


def measure(commands: dict[str, Command], cwd: Path, runs: int) -> dict[str, Sample]:
    """Per command, the medians (peak: the maximum) of ``runs`` round-robin runs after one
    warm-up run each."""
    for make in commands.values():
        run_process(*make(-1), cwd=cwd)
    samples: dict[str, list[Sample]] = {label: [] for label in commands}
    for i in range(runs):
        for label, make in commands.items():
            samples[label].append(run_process(*make(i), cwd=cwd))
    return {
        label: Sample(
            statistics.median(s.wall for s in got),
            statistics.median(s.cpu for s in got),
            max(s.peak for s in got),
        )
        for label, got in samples.items()
    }
