"""Benchmark: start-up of the commands people run in hooks and loops, beside Python's own.

Usage::

    python bench/bench_startup.py            # 15 runs of each command
    python bench/bench_startup.py --runs 5

Copies the example project (``toolctl.yaml``, ``tools.d/``, ``examples/``) to a temporary
directory and times, as fresh processes, round-robin, the median of ``--runs`` runs of each
command beside the reference ``python -c 'import yaml'`` (the one library every command needs).
``validate``/``list``/``lint``/``export`` run with the load cache warm (as in a hook or loop) and
``validate`` once more with ``--no-cache`` (every file parsed and checked). ``lint`` and
``export -f openai`` run once more, warm, on a small realistic registry (``bench/corpus.py``:
shared ``$ref``s, formats, examples; ``--realistic`` tools, one per file; ``--corpus heldout``:
the held-out registry of ``bench/corpus_heldout.py`` instead).

Budgets (issue 16): ``toolctl validate`` <= 3x the reference, ``toolctl run reverse`` <= 4x;
(issue 27) on the realistic registry warm ``lint`` <= 4x, warm ``export -f openai`` <= 3x.
The script prints ratios; it asserts nothing (timings are too noisy for tests).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from bench_validate import _ENV
from corpus import writer
from procs import Command, measure

REPO = Path(__file__).resolve().parents[1]
REALISTIC = "realistic"  # the directory of the realistic registry, beside the example's copy
BUDGETS = {
    "toolctl validate": 3.0,
    "toolctl run reverse": 4.0,
    "toolctl lint, realistic": 4.0,
    "toolctl export -f openai, realistic": 3.0,
}


def _toolctl() -> list[str]:
    """The console script next to this Python (what users run), else ``python -m toolctl``."""
    script = Path(sys.executable).with_name("toolctl")
    return [str(script)] if script.is_file() else [sys.executable, "-m", "toolctl"]


def commands() -> dict[str, list[str]]:
    """Label -> command line; the first is the reference."""
    py, tc = sys.executable, _toolctl()
    return {
        "python -c 'import yaml'": [py, "-c", "import yaml"],
        "python -c 'import typer'": [py, "-c", "import typer"],
        "toolctl --version": [*tc, "--version"],
        "toolctl validate": [*tc, "validate"],
        "toolctl --no-cache validate": [*tc, "--no-cache", "validate"],
        "toolctl list": [*tc, "list"],
        "toolctl lint": [*tc, "lint"],
        "toolctl export openai": [*tc, "export", "openai"],
        "toolctl run reverse": [*tc, "run", "reverse", "--input", '{"input":"abc"}'],
        "toolctl lint, realistic": [*tc, "lint", "-r", REALISTIC],
        "toolctl export -f openai, realistic": [*tc, "export", "-f", "openai", "-r", REALISTIC],
    }


def _copy_example(work: Path) -> None:
    for name in ("toolctl.yaml", "tools.d", "examples"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, work / name, ignore=shutil.ignore_patterns(".toolctl"))
        else:
            shutil.copy(source, work / name)


def _verdict(label: str, wall: float, cpu: float) -> str:
    budget = BUDGETS.get(label)
    if budget is None:
        return ""
    return (
        f"<= {budget:.1f}x: wall {'ok' if wall <= budget else 'OVER'},"
        f" cpu {'ok' if cpu <= budget else 'OVER'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=15, help="timed runs per command")
    parser.add_argument(
        "--realistic", type=int, default=30, help="tools in the realistic registry (one per file)"
    )
    parser.add_argument(
        "--corpus",
        choices=("realistic", "heldout"),
        default="realistic",
        help="the small realistic registry: bench/corpus.py's or bench/corpus_heldout.py's",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="toolctl-startup-") as tmp:
        work = Path(tmp)
        _copy_example(work)
        writer(args.corpus)(work / REALISTIC, args.realistic)
        cmds = commands()
        todo: dict[str, Command] = {k: (lambda i, argv=v: (argv, _ENV)) for k, v in cmds.items()}
        result = measure(todo, work, args.runs)  # one warm-up each (fills the cache) first
        reference = next(iter(cmds))
        wall0, cpu0 = result[reference].wall, result[reference].cpu
        print(
            f"python {sys.version.split()[0]}; example registry (9 tools), {args.corpus} registry"
            f" ({args.realistic} tools, one per file); median of"
        )
        print(f"{args.runs} fresh-process runs, round-robin; ratio = time / {reference}")
        print("(cpu = user + system time: what waiting for a busy core does not inflate)")
        print(f"{'command':<36} {'wall ms':>8} {'ratio':>6} {'cpu ms':>7} {'ratio':>6}  budget")
        for label, r in result.items():
            wall, cpu = r.wall / wall0, r.cpu / cpu0
            print(
                f"{label:<36} {r.wall * 1e3:>8.1f} {wall:>6.2f} {r.cpu * 1e3:>7.1f}"
                f" {cpu:>6.2f}  {_verdict(label, wall, cpu)}".rstrip()
            )


if __name__ == "__main__":
    main()
