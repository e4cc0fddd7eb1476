"""Benchmark: whole-process ``toolctl validate`` against the YAML floor and the naive approach.

Usage::

    python bench/bench_validate.py            # 10, 100, 1,000 tools (+ --help comparison)
    python bench/bench_validate.py --big      # also 10,000 tools (a few minutes)
    python bench/bench_validate.py --runs 7 --layout per-tool

For each registry size it generates the realistic registry of ``corpus.py`` (shared ``$ref``s,
examples, formats; ``--corpus synthetic``: this script's own flat tools, 3-5 typed, described,
constrained input properties, an output schema, MCP annotations) and times, as fresh processes,
round-robin, the median of ``--runs`` runs of:

* ``toolctl``: ``python -m toolctl --no-cache validate DIR`` (every file loaded and checked;
  ``bench_cache.py`` measures the load cache);
* ``floor``: a script that only reads the same files and parses them with PyYAML's CSafeLoader;
* ``naive``: the floor plus ``jsonschema``'s ``check_schema`` on every schema of every tool.

Budgets (issue 2): validate@1000 <= 1.5x floor and >= 2x faster than naive (``--no-cache``
<= 1.3x floor on the realistic corpus, issue 27); ``toolctl --help``
<= 1.3x a minimal two-command Typer app's ``--help``. The script prints ratios; it asserts nothing
(timings are too noisy for tests).

Layout: by default ~100 tools per file (``tools:`` collections), which is how large generated
registries are usually kept; ``--layout per-tool`` writes one file per tool.
"""

from __future__ import annotations

import argparse
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from corpus import add_corpus_option, verdict, write_registry

TOOLS_PER_FILE = 100
BUDGET = {"realistic": 1.3, "heldout": 1.3, "synthetic": 1.5}  # toolctl / floor at 1,000 tools

FLOOR = """
import sys
from pathlib import Path
import yaml
for path in sorted(Path(sys.argv[1]).rglob("*.yaml")):
    yaml.load(path.read_text("utf-8"), Loader=yaml.CSafeLoader)
"""

NAIVE = """
import sys
from pathlib import Path
import yaml
from jsonschema import Draft202012Validator
KEYS = ("inputSchema", "outputSchema")
for path in sorted(Path(sys.argv[1]).rglob("*.yaml")):
    data = yaml.load(path.read_text("utf-8"), Loader=yaml.CSafeLoader)
    for tool in data.get("tools", [data]):
        for key in KEYS:
            if key in tool:
                Draft202012Validator.check_schema(tool[key])
"""

MINIMAL_TYPER = """
import typer
app = typer.Typer()
@app.command()
def hello(name: str) -> None:
    \"\"\"Say hello.\"\"\"
    typer.echo(f"hello {name}")
@app.command()
def version() -> None:
    \"\"\"Show the version.\"\"\"
    typer.echo("1.0")
if __name__ == "__main__":
    app()
"""

HANDLERS = "def run(payload):\n    return payload\n"

_WORDS = ("city", "query", "limit", "offset", "unit", "lang", "region", "mode", "depth", "tag")


def _prop(rng: random.Random, name: str) -> list[str]:
    """YAML lines (indented for inputSchema.properties) for one typed, described property."""
    kind = rng.choice(("string", "integer", "number", "boolean", "array", "enum"))
    lines = [f"        {name}:"]
    if kind == "enum":
        lines += ["          type: string", "          enum: [alpha, beta, gamma, delta]"]
    elif kind == "array":
        lines += [
            "          type: array",
            "          items: {type: string, maxLength: 40}",
            "          maxItems: 10",
        ]
    elif kind == "string":
        lines += [
            "          type: string",
            "          minLength: 1",
            "          maxLength: 200",
            "          pattern: '^[A-Za-z0-9 ,.-]+$'",
        ]
    elif kind in ("integer", "number"):
        lines += [f"          type: {kind}", "          minimum: 0", "          maximum: 1000"]
    else:
        lines += ["          type: boolean", "          default: false"]
    lines.append(f"          description: The {name} to use for this request, as documented.")
    return lines


def tool_yaml(i: int, rng: random.Random) -> list[str]:
    """One realistic tool as YAML lines, indented as an item of a ``tools:`` list."""
    names = rng.sample(_WORDS, rng.randint(3, 5))
    lines = [
        f"  - name: tool_{i:05d}",
        f"    title: Tool number {i}",
        f"    description: Looks up {names[0]} data for the user and returns a short summary with"
        " the matching records. Use it when the user asks about a specific item.",
        "    handler: benchhandlers:run",
        "    inputSchema:",
        "      type: object",
        "      properties:",
    ]
    for name in names:
        lines += _prop(rng, name)
    lines += [
        f"      required: [{names[0]}]",
        "      additionalProperties: false",
        "    outputSchema:",
        "      type: object",
        "      properties:",
        "        summary: {type: string, description: One-paragraph summary.}",
        "        count: {type: integer, minimum: 0, description: Number of records.}",
        "        items: {type: array, items: {type: string}, description: Record ids.}",
        "      required: [summary, count]",
        "    mcp:",
        "      annotations:",
        f"        title: Tool number {i}",
        "        readOnlyHint: true",
        "        destructiveHint: false",
        "        idempotentHint: true",
        "        openWorldHint: false",
    ]
    return lines


def generate(root: Path, count: int, layout: str) -> Path:
    """Write a registry of ``count`` tools under ``root``; return its tools directory."""
    rng = random.Random(count)
    tools_dir = root / "tools.d"
    tools_dir.mkdir(parents=True)
    (root / "benchhandlers.py").write_text(HANDLERS, encoding="utf-8")
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: .\n", encoding="utf-8")
    per_file = 1 if layout == "per-tool" else TOOLS_PER_FILE
    for start in range(0, count, per_file):
        lines = ["toolctl: 1", "tools:"]
        for i in range(start, min(start + per_file, count)):
            lines += tool_yaml(i, rng)
        name = f"tools_{start // per_file:05d}.yaml"
        (tools_dir / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    return tools_dir


def _time(cmd: list[str], cwd: Path) -> float:
    start = time.perf_counter()
    proc = subprocess.run(
        cmd, cwd=cwd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=_ENV, check=False
    )
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"command failed ({proc.returncode}): {' '.join(cmd)}\n{proc.stderr.decode()}")
    return elapsed


def measure(commands: dict[str, list[str]], cwd: Path, runs: int) -> dict[str, float]:
    """Median seconds per command, run round-robin after one warm-up each."""
    for cmd in commands.values():
        _time(cmd, cwd)
    samples: dict[str, list[float]] = {k: [] for k in commands}
    for _ in range(runs):
        for key, cmd in commands.items():
            samples[key].append(_time(cmd, cwd))
    return {k: statistics.median(v) for k, v in samples.items()}


# Bytecode caching stays on (as for an installed package): the warm-up run writes toolctl's .pyc
# files, so no run pays for compiling source (PYTHONDONTWRITEBYTECODE=1 would make every run do so).
_ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"} | {"NO_COLOR": "1"}


def bench_validate(
    sizes: list[int], runs: int, layout: str, work: Path, corpus: str = "realistic"
) -> None:
    py = sys.executable
    floor, naive = work / "floor.py", work / "naive.py"
    floor.write_text(FLOOR, encoding="utf-8")
    naive.write_text(NAIVE, encoding="utf-8")
    per_file = 1 if layout == "per-tool" else TOOLS_PER_FILE
    print(
        f"{corpus} corpus, layout: {layout} ({per_file} tool(s) per file)"
        f"; median of {runs} fresh-process runs, round-robin"
    )
    print(
        f"{'tools':>7} {'toolctl ms':>11} {'floor ms':>9} {'naive ms':>9} "
        f"{'toolctl/floor':>14} {'naive/toolctl':>14}"
    )
    for n in sizes:
        root = work / f"reg_{n}"
        tools_dir = write_registry(
            corpus, root, n, per_file, lambda root=root, n=n: generate(root, n, layout)
        )
        r = measure(
            {
                "toolctl": [py, "-m", "toolctl", "--no-cache", "validate", str(tools_dir)],
                "floor": [py, str(floor), str(tools_dir)],
                "naive": [py, str(naive), str(tools_dir)],
            },
            root,
            runs if n < 10_000 else max(3, runs // 2),
        )
        print(
            f"{n:>7} {r['toolctl'] * 1e3:>11.0f} {r['floor'] * 1e3:>9.0f} "
            f"{r['naive'] * 1e3:>9.0f} {r['toolctl'] / r['floor']:>14.2f} "
            f"{r['naive'] / r['toolctl']:>14.2f}  "
            + verdict(r["toolctl"] / r["floor"], BUDGET[corpus]),
            flush=True,
        )
    print(f"budget at 1,000 tools: toolctl/floor <= {BUDGET[corpus]:.2f}, naive/toolctl >= 2.00")


def bench_help(runs: int, work: Path) -> None:
    minimal = work / "minimal_typer.py"
    minimal.write_text(MINIMAL_TYPER, encoding="utf-8")
    py = sys.executable
    r = measure(
        {
            "toolctl": [py, "-m", "toolctl", "--help"],
            "typer": [py, str(minimal), "--help"],
        },
        work,
        runs * 2,
    )
    print(
        f"--help: toolctl {r['toolctl'] * 1e3:.0f} ms, minimal typer {r['typer'] * 1e3:.0f} ms,"
        f" ratio {r['toolctl'] / r['typer']:.2f} (budget <= 1.30)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--big", action="store_true", help="also run 10,000 tools (minutes)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per command")
    parser.add_argument("--layout", choices=("grouped", "per-tool"), default="grouped")
    parser.add_argument("--sizes", type=int, nargs="*", help="override the registry sizes")
    add_corpus_option(parser)
    args = parser.parse_args()
    sizes = args.sizes or [10, 100, 1_000, *([10_000] if args.big else [])]
    with tempfile.TemporaryDirectory(prefix="toolctl-bench-") as tmp:
        work = Path(tmp)
        print(f"python {sys.version.split()[0]} ({sys.executable})")
        bench_validate(sizes, args.runs, args.layout, work, args.corpus)
        bench_help(args.runs, work)


if __name__ == "__main__":
    main()
