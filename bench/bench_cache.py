"""Benchmark: ``toolctl validate`` with a warm and a cold load cache, beside parsing the files.

Usage::

    python bench/bench_cache.py                       # 5,000 one-tool files, 3 runs
    python bench/bench_cache.py --tools 10000 --layout grouped   # memory at 10,000 tools

Generates the registry of ``bench_validate.py`` and times, as fresh processes, round-robin, the
median of ``--runs`` runs of:

* ``floor``: reading the files and parsing them with PyYAML's C loader (``CSafeLoader``);
* ``warm``: ``toolctl validate`` with every file's entry in the cache;
* ``cold``: ``toolctl validate`` with an empty cache directory (loads, checks, writes entries);
* ``no-cache``: ``toolctl --no-cache validate`` (loads and checks, writes nothing).

Each line also shows the process's peak resident memory (``ru_maxrss``). Budgets (issue 16):
warm < 1.0x floor, cold <= 1.5x floor; validate of 10,000 tools < 150 MiB. The script prints
ratios; it asserts nothing (timings are too noisy for tests).
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from bench_validate import _ENV, FLOOR, generate

Command = Callable[[int], tuple[list[str], dict[str, str]]]  # run number -> argv, env


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> tuple[float, float]:
    """(seconds, peak MiB) of one fresh process."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
    )
    _, status, usage = os.wait4(proc.pid, 0)
    elapsed = time.perf_counter() - start
    stderr = proc.stderr.read().decode() if proc.stderr else ""
    if proc.stderr:
        proc.stderr.close()
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(argv)}\n{stderr}")
    return elapsed, usage.ru_maxrss / 1024  # KiB on Linux


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=5000, help="number of tools")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per command")
    parser.add_argument("--layout", choices=("per-tool", "grouped"), default="per-tool")
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="toolctl-cache-bench-") as tmp:
        work = Path(tmp)
        tools_dir = generate(work / "reg", args.tools, args.layout)
        floor = work / "floor.py"
        floor.write_text(FLOOR, encoding="utf-8")
        warm_dir = work / "warm-cache"
        validate = [py, "-m", "toolctl", "validate", str(tools_dir)]

        def env(cache: Path) -> dict[str, str]:
            return {**_ENV, "TOOLCTL_CACHE_DIR": str(cache)}

        commands: dict[str, Command] = {
            "floor (CSafeLoader parse)": lambda i: ([py, str(floor), str(tools_dir)], _ENV),
            "toolctl validate, warm": lambda i: (validate, env(warm_dir)),
            "toolctl validate, cold": lambda i: (validate, env(work / f"cold-{i}")),
            "toolctl --no-cache validate": lambda i: (
                [py, "-m", "toolctl", "--no-cache", "validate", str(tools_dir)],
                _ENV,
            ),
        }
        for make in commands.values():  # warm-up: bytecode, page cache, the warm entries
            _run(*make(-1), cwd=work / "reg")
        times: dict[str, list[float]] = {k: [] for k in commands}
        peaks: dict[str, list[float]] = {k: [] for k in commands}
        for i in range(args.runs):
            for label, make in commands.items():
                seconds, peak = _run(*make(i), cwd=work / "reg")
                times[label].append(seconds)
                peaks[label].append(peak)
        per = "one tool per file" if args.layout == "per-tool" else "100 tools per file"
        print(f"python {sys.version.split()[0]}; {args.tools} tools, {per}; median of")
        print(f"{args.runs} fresh-process runs, round-robin")
        base = statistics.median(times["floor (CSafeLoader parse)"])
        print(f"{'command':<30} {'ms':>8} {'x floor':>8} {'peak MiB':>9}")
        for label in commands:
            med = statistics.median(times[label])
            print(
                f"{label:<30} {med * 1e3:>8.0f} {med / base:>8.2f} {max(peaks[label]):>9.1f}"
            )
        print("budgets: warm < 1.00x floor, cold <= 1.50x floor; 10,000 tools < 150 MiB peak")


if __name__ == "__main__":
    main()
