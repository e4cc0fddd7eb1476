"""Benchmark: ``toolctl validate`` with a warm and a cold load cache, beside parsing the files.

Usage::

    python bench/bench_cache.py                       # 5,000 one-tool files, 3 runs
    python bench/bench_cache.py --tools 10000 --layout grouped   # memory at 10,000 tools

Generates the realistic registry of ``corpus.py`` (``--corpus synthetic``: the flat tools of
``bench_validate.py``) and times, as fresh processes, round-robin, the median of ``--runs``
runs of:

* ``floor``: reading the files and parsing them with PyYAML's C loader (``CSafeLoader``);
* ``warm``: ``toolctl validate`` with every file's entry in the cache;
* ``cold``: ``toolctl validate`` with an empty cache directory (loads, checks, writes entries);
* ``no-cache``: ``toolctl --no-cache validate`` (loads and checks, writes nothing).

``--base SRC`` adds the same three commands run with another checkout's ``src`` first on
``PYTHONPATH`` (each with its own cache directories), in the same rounds: a before/after of
a change measured under the same load.

Each line also shows the process's peak resident memory (``ru_maxrss``) and the verdict of its
CPU ratio. Budgets on the realistic corpus (issue 27): warm <= 0.5x floor, cold <= 1.5x,
``--no-cache`` <= 1.3x; on the synthetic one (issue 16): warm < 1.0x, cold <= 1.5x; validate of
10,000 tools < 150 MiB. The script prints ratios; it asserts nothing (timings are too noisy for
tests).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bench_validate import _ENV, FLOOR, TOOLS_PER_FILE, generate
from corpus import add_corpus_option, verdict, write_registry
from procs import Command, measure

FLOOR_LABEL = "floor (CSafeLoader parse)"
WARM, COLD, NO_CACHE = (
    "toolctl validate, warm",
    "toolctl validate, cold",
    "toolctl --no-cache validate",
)
BUDGETS = {  # x floor, CPU
    "realistic": {WARM: 0.5, COLD: 1.5, NO_CACHE: 1.3},
    "heldout": {WARM: 0.5, COLD: 1.5, NO_CACHE: 1.3},
    "synthetic": {WARM: 1.0, COLD: 1.5},
}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=5000, help="number of tools")
    parser.add_argument("--runs", type=int, default=3, help="timed runs per command")
    parser.add_argument("--layout", choices=("per-tool", "grouped"), default="per-tool")
    parser.add_argument(
        "--base", type=Path, help="another checkout's src directory: before/after rows"
    )
    add_corpus_option(parser)
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory(prefix="toolctl-cache-bench-") as tmp:
        work = Path(tmp)
        per_file = 1 if args.layout == "per-tool" else TOOLS_PER_FILE
        tools_dir = write_registry(
            args.corpus,
            work / "reg",
            args.tools,
            per_file,
            lambda: generate(work / "reg", args.tools, args.layout),
        )
        floor = work / "floor.py"
        floor.write_text(FLOOR, encoding="utf-8")
        validate = [py, "-m", "toolctl", "validate", str(tools_dir)]

        no_cache = [py, "-m", "toolctl", "--no-cache", "validate", str(tools_dir)]
        commands: dict[str, Command] = {
            FLOOR_LABEL: lambda i: ([py, str(floor), str(tools_dir)], _ENV),
        }
        sides = [("", None)] if args.base is None else [(", before", args.base), (", after", None)]
        for suffix, src in sides:
            base = {**_ENV, "PYTHONPATH": str(src.resolve())} if src is not None else _ENV
            tag = "base" if src is not None else "this"

            def env(cache: str, base: dict[str, str] = base) -> dict[str, str]:
                return {**base, "TOOLCTL_CACHE_DIR": str(work / cache)}

            commands[WARM + suffix] = lambda i, e=env, t=tag: (validate, e(f"warm-{t}"))
            commands[COLD + suffix] = lambda i, e=env, t=tag: (validate, e(f"cold-{t}-{i}"))
            commands[NO_CACHE + suffix] = lambda i, b=base: (no_cache, b)
        result = measure(commands, work / "reg", args.runs)
        per = "one tool per file" if per_file == 1 else f"{per_file} tools per file"
        print(f"python {sys.version.split()[0]}; {args.corpus} corpus, {args.tools} tools, {per};")
        print(f"median of {args.runs} fresh-process runs, round-robin (cpu = user + system time)")
        wall0, cpu0 = result[FLOOR_LABEL].wall, result[FLOOR_LABEL].cpu
        width = max(28, *map(len, result))
        print(
            f"{'command':<{width}} {'wall ms':>8} {'x floor':>8} {'cpu ms':>8} {'x floor':>8}"
            f" {'peak MiB':>9}  budget (cpu)"
        )
        budgets = BUDGETS[args.corpus]
        for label, r in result.items():
            budget = budgets.get(label.removesuffix(", before").removesuffix(", after"))
            print(
                f"{label:<{width}} {r.wall * 1e3:>8.0f} {r.wall / wall0:>8.2f} {r.cpu * 1e3:>8.0f}"
                f" {r.cpu / cpu0:>8.2f} {r.peak:>9.1f}"
                f"  {verdict(r.cpu / cpu0, budget) if budget else ''}".rstrip()
            )
        print("validate of 10,000 tools: < 150 MiB peak")


if __name__ == "__main__":
    main()
