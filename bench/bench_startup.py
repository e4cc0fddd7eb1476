"""Benchmark: start-up of the commands people run in hooks and loops, beside Python's own.

Usage::

    python bench/bench_startup.py            # 15 runs of each command
    python bench/bench_startup.py --runs 5

Copies the example project (``toolctl.yaml``, ``tools.d/``, ``examples/``) to a temporary
directory and times, as fresh processes, round-robin, the median of ``--runs`` runs of each
command beside the reference ``python -c 'import yaml'`` (the one library every command needs).
``validate``/``list``/``lint``/``export`` run with the load cache warm (as in a hook or loop) and
``validate`` once more with ``--no-cache`` (every file parsed and checked). With ``--corpus
realistic`` (the default) the project also holds a small realistic registry of ``corpus.py``
(``--corpus-tools``, default 50: shared ``$ref``s, examples, formats) beside the example's
tools; ``--corpus synthetic`` times the example project alone.

Budgets (issue 16): ``toolctl validate`` <= 3x the reference, ``toolctl run reverse`` <= 4x.
The script prints ratios; it asserts nothing (timings are too noisy for tests).
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
from pathlib import Path

from bench_validate import _ENV
from corpus import add_corpus_option, write_corpus
from procs import Command, measure

REPO = Path(__file__).resolve().parents[1]
BUDGETS = {"toolctl validate": 3.0, "toolctl run reverse": 4.0}


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
    }


def _copy_example(work: Path) -> None:
    for name in ("toolctl.yaml", "tools.d", "examples"):
        source = REPO / name
        if source.is_dir():
            shutil.copytree(source, work / name, ignore=shutil.ignore_patterns(".toolctl"))
        else:
            shutil.copy(source, work / name)


def _add_corpus(work: Path, tools: int) -> None:
    """A realistic registry of ``tools`` tools in ``tools.d/corpus/`` of the copied project,
    its handler module beside the example's (``pythonPath: [examples]``)."""
    staging = work / "_corpus"
    write_corpus(staging, tools)
    shutil.move(staging / "tools.d", work / "tools.d" / "corpus")
    shutil.move(staging / "corpushandlers.py", work / "examples" / "corpushandlers.py")
    shutil.rmtree(staging)


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
    add_corpus_option(parser)
    parser.add_argument("--corpus-tools", type=int, default=50, help="realistic tools added")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="toolctl-startup-") as tmp:
        work = Path(tmp)
        _copy_example(work)
        registry = "example registry (9 tools)"
        if args.corpus == "realistic":
            _add_corpus(work, args.corpus_tools)
            registry += f" + {args.corpus_tools} realistic tools (corpus.py)"
        cmds = commands()
        todo: dict[str, Command] = {k: (lambda i, argv=v: (argv, _ENV)) for k, v in cmds.items()}
        result = measure(todo, work, args.runs)  # one warm-up each (fills the cache) first
        reference = next(iter(cmds))
        wall0, cpu0 = result[reference].wall, result[reference].cpu
        print(f"python {sys.version.split()[0]}; {registry}; median of")
        print(f"{args.runs} fresh-process runs, round-robin; ratio = time / {reference}")
        print("(cpu = user + system time: what waiting for a busy core does not inflate)")
        print(f"{'command':<28} {'wall ms':>8} {'ratio':>6} {'cpu ms':>7} {'ratio':>6}  budget")
        for label, r in result.items():
            wall, cpu = r.wall / wall0, r.cpu / cpu0
            print(
                f"{label:<28} {r.wall * 1e3:>8.1f} {wall:>6.2f} {r.cpu * 1e3:>7.1f}"
                f" {cpu:>6.2f}  {_verdict(label, wall, cpu)}".rstrip()
            )


if __name__ == "__main__":
    main()
