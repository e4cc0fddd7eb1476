"""Benchmark: ``toolctl search`` index build (cold) and warm lookups, at 1,000 and 10,000 tools.

    python bench/bench_search_speed.py [--tools 1000 10000] [--runs 5]

Generates the registry of bench_validate.py (grouped files) per size, then, as fresh processes:

* ``cold``: the first ``toolctl search`` (loads every tool file, builds the index, keeps it in
  the load cache); its wall and CPU time and peak memory are the index build's cost, load
  included (one run: it is cold once);
* ``warm``: ``toolctl search QUERY`` with nothing changed (the index is a lookup), median of
  ``--runs`` runs, round-robin with ``toolctl --version``.

Prints the warm/--version ratio of CPU times (robust on a shared machine) and of wall times.
Budgets: a warm search on 10,000 tools within 3x ``toolctl --version`` (issue 24); the index
build within BUILD_MS_PER_TOOL of CPU a tool (the encoder runs on WORKERS threads, so its wall
time on 2 free cores is about half that). Asserts nothing (timings are too noisy for tests).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from bench_validate import _ENV, generate
from procs import measure, run_process

QUERY = "convert a temperature between units"
# the build's CPU budget a tool, load included: 25 s at 1,000 tools, 250 s at 10,000 (what the
# encoder reaches in numpy; the wall time is about half on two free cores)
BUILD_MS_PER_TOOL = 25.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    exe = str(Path(sys.executable).with_name("toolctl"))
    for count in args.tools:
        work = Path(tempfile.mkdtemp(prefix="bench-search-"))
        try:
            generate(work, count, "grouped")
            env = _ENV | {"TOOLCTL_DATA_DIR": str(work / "data")}
            run_process([exe, "validate"], env, work)  # the load cache, as after any command
            cold = run_process([exe, "search", QUERY], env, work)
            got = measure(
                {
                    "warm search": lambda i, env=env: ([exe, "search", QUERY], env),
                    "--version": lambda i, env=env: ([exe, "--version"], env),
                },
                work,
                args.runs,
            )
            warm, version = got["warm search"], got["--version"]
            print(
                f"{count} tools: index build (cold search, load cache warm) "
                f"{cold.wall:.2f} s wall, {cold.cpu:.2f} s CPU, peak {cold.peak:.0f} MiB"
            )
            print(
                f"{count} tools: index build {cold.cpu * 1000 / count:.1f} ms CPU a tool "
                f"(budget {BUILD_MS_PER_TOOL:.0f} ms: {BUILD_MS_PER_TOOL * count / 1000:.0f} s CPU)"
            )
            print(
                f"{count} tools: warm search {warm.wall * 1000:.0f} ms wall, "
                f"{warm.cpu * 1000:.0f} ms CPU, peak {warm.peak:.0f} MiB; --version "
                f"{version.wall * 1000:.0f} ms wall, {version.cpu * 1000:.0f} ms CPU"
            )
            print(
                f"{count} tools: warm search / --version = {warm.cpu / version.cpu:.2f}x CPU, "
                f"{warm.wall / version.wall:.2f}x wall (budget 3x)"
            )
            size = (work / ".toolctl" / "cache" / "search" / "index").stat().st_size
            print(f"{count} tools: kept index {size / 2**20:.1f} MiB")
        finally:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
