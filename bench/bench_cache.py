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
import sys
import tempfile
from pathlib import Path

from bench_validate import _ENV, FLOOR, generate
from procs import Command, measure

FLOOR_LABEL = "floor (CSafeLoader parse)"


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
        validate = [py, "-m", "toolctl", "validate", str(tools_dir)]

        def env(cache: Path) -> dict[str, str]:
            return {**_ENV, "TOOLCTL_CACHE_DIR": str(cache)}

        commands: dict[str, Command] = {
            FLOOR_LABEL: lambda i: ([py, str(floor), str(tools_dir)], _ENV),
            "toolctl validate, warm": lambda i: (validate, env(work / "warm-cache")),
            "toolctl validate, cold": lambda i: (validate, env(work / f"cold-{i}")),
            "toolctl --no-cache validate": lambda i: (
                [py, "-m", "toolctl", "--no-cache", "validate", str(tools_dir)],
                _ENV,
            ),
        }
        result = measure(commands, work / "reg", args.runs)
        per = "one tool per file" if args.layout == "per-tool" else "100 tools per file"
        print(f"python {sys.version.split()[0]}; {args.tools} tools, {per}; median of")
        print(f"{args.runs} fresh-process runs, round-robin (cpu = user + system time)")
        wall0, cpu0 = result[FLOOR_LABEL].wall, result[FLOOR_LABEL].cpu
        print(
            f"{'command':<28} {'wall ms':>8} {'x floor':>8} {'cpu ms':>8} {'x floor':>8}"
            f" {'peak MiB':>9}"
        )
        for label, r in result.items():
            print(
                f"{label:<28} {r.wall * 1e3:>8.0f} {r.wall / wall0:>8.2f} {r.cpu * 1e3:>8.0f}"
                f" {r.cpu / cpu0:>8.2f} {r.peak:>9.1f}"
            )
        print("budgets: warm < 1.00x floor, cold <= 1.50x floor; 10,000 tools < 150 MiB peak")


if __name__ == "__main__":
    main()
