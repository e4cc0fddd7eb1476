"""Benchmark: peak memory of ``validate`` and ``export mcp`` on the realistic corpus.

Usage::

    python bench/bench_memory.py                          # 1,000 and 10,000 tools, 100 per file
    python bench/bench_memory.py --tools 1000 10000 50000 --per-file 100

Writes the corpus of ``corpus.py`` (shared ``$ref`` files, examples, nested schemas) and runs,
as fresh processes, each command once per size, printing its peak resident memory
(``ru_maxrss``) and CPU time beside two references measured in the same run: the floor (reading
and parsing the same files with PyYAML's C loader) and ``--no-cache validate``:

* ``validate --no-cache``; ``validate, cold`` (empty cache); ``validate, warm``;
* ``export mcp -o FILE``, cold and warm (export writes each tool as it goes).

Budgets (issue 27), at 10,000 tools, 100 per file: ``--no-cache validate`` <= 150 MiB;
``export mcp`` <= 1.5x that. The script prints; it asserts nothing.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bench_validate import _ENV, FLOOR
from corpus import writer
from procs import Sample, run_process

BUDGET_MIB = 150.0  # --no-cache validate at 10,000 tools
EXPORT_RATIO = 1.5  # export mcp / --no-cache validate


def _rows(tools: int, per_file: int, work: Path, corpus: str) -> dict[str, Sample]:
    root = writer(corpus)(work / f"reg{tools}", tools, per_file)
    floor = work / "floor.py"
    floor.write_text(FLOOR, encoding="utf-8")
    py = sys.executable
    cache = work / f"cache{tools}"
    env = {**_ENV, "TOOLCTL_CACHE_DIR": str(cache)}
    cold_env = {**_ENV, "TOOLCTL_CACHE_DIR": str(work / f"cold{tools}")}
    out = str(work / "export.json")
    tc = [py, "-m", "toolctl"]
    export = ["export", "mcp", "-o", out]
    steps: list[tuple[str, list[str], dict[str, str]]] = [
        ("floor (CSafeLoader parse)", [py, str(floor), str(root / "tools.d")], _ENV),
        ("validate --no-cache", [*tc, "--no-cache", "validate"], _ENV),
        ("validate, cold", [*tc, "validate"], env),
        ("validate, warm", [*tc, "validate"], env),
        ("export mcp, cold", [*tc, *export], cold_env),
        ("export mcp, warm", [*tc, *export], env),
    ]
    return {label: run_process(argv, env, cwd=root) for label, argv, env in steps}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--per-file", type=int, default=100, help="tools per file")
    parser.add_argument(
        "--corpus",
        choices=("realistic", "heldout"),
        default="realistic",
        help="realistic: bench/corpus.py; heldout: bench/corpus_heldout.py",
    )
    args = parser.parse_args()
    print(f"python {sys.version.split()[0]}; {args.corpus} corpus, {args.per_file} tools per file;")
    print("one fresh process per command (peak = ru_maxrss; cpu = user + system time)")
    print(
        f"{'tools':>6} {'command':<26} {'peak MiB':>9} {'MiB/1k':>7} {'x no-cache':>10}"
        f" {'cpu ms':>8} {'x floor':>8}"
    )
    verdicts = []
    with tempfile.TemporaryDirectory(prefix="toolctl-mem-bench-") as tmp:
        for tools in args.tools:
            rows = _rows(tools, args.per_file, Path(tmp), args.corpus)
            ref, floor = rows["validate --no-cache"], rows["floor (CSafeLoader parse)"]
            for label, r in rows.items():
                print(
                    f"{tools:>6} {label:<26} {r.peak:>9.1f} {r.peak * 1000 / tools:>7.1f}"
                    f" {r.peak / ref.peak:>10.2f} {r.cpu * 1e3:>8.0f} {r.cpu / floor.cpu:>8.2f}"
                )
            worst = max(rows["export mcp, cold"].peak, rows["export mcp, warm"].peak)
            ok = "ok" if ref.peak <= BUDGET_MIB * max(tools, 10000) / 10000 else "OVER"
            ratio = worst / ref.peak
            verdicts.append(
                f"{tools} tools: validate --no-cache {ref.peak:.0f} MiB ({ok}; budget "
                f"{BUDGET_MIB:.0f} MiB at 10,000), export mcp {ratio:.2f}x it "
                f"({'ok' if ratio <= EXPORT_RATIO else 'OVER'}; budget {EXPORT_RATIO}x)"
            )
    print("\n".join(verdicts))


if __name__ == "__main__":
    main()
