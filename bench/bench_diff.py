"""``toolctl diff`` of two 1,000-tool registries, against a floor and a peer, in one run.

Two registries of N tools are generated; the head changes one tool in ten (narrowed and widened
inputs, new output fields, flipped hints, reworded descriptions), removes one and adds one.

* floor: loading both registries (what any diff must do before comparing anything);
* peer: an unclassified snapshot diff of the loaded tools (each declaration's JSON compared,
  reporting added/removed/modified: what MXCP's drift-check reports);
* toolctl: loading both, building both sides (canonical contracts and digests), classifying every
  change (schemas, hints, semver gate, tool-poisoning rules on new text) and rendering the report;
* the ``toolctl diff A B`` command end to end, Python start-up included (budget: under 2 s), and
  ``toolctl diff`` (a lock file against the working tree: one registry to load).

Each line shows wall time and CPU time: on a shared machine the wall time also counts waiting
for a core, the CPU time is what the work costs.

Not a test: it prints numbers and ratios.

    python bench/bench_diff.py [--tools 1000] [--repeat 5]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TOOL = """\
toolctl: 1
name: {name}
version: 1.0.0
description: {description}
handler: bench_handler:run
inputSchema:
  type: object
  properties:
    query: {{type: string, maxLength: {max_length}, description: What to look for.}}
    limit: {{type: integer, minimum: 1, maximum: {maximum}}}
    mode: {{enum: [fast, full{extra_mode}]}}
  required: [query{required}]
  additionalProperties: false
outputSchema:
  type: object
  properties:
    items: {{type: array, items: {{type: string}}}}
    total: {{type: integer}}{output_extra}
  required: [items, total]
mcp:
  annotations: {{readOnlyHint: {read_only}, destructiveHint: false, openWorldHint: false}}
"""


COLD_LOAD = """
import sys
from toolctl.config import project_at
from toolctl.loader import load_registry
for root in sys.argv[1:]:
    load_registry(project=project_at(root))
"""


def _tool(i: int, changed: bool) -> str:
    kind = i % 50 if changed else -1
    return TOOL.format(
        name=f"tool_{i:04d}",
        description=(
            f"Search collection {i} and return matching item ids."
            if kind != 10
            else f"Search collection {i} and return the ids of matching items."
        ),
        max_length=80 if kind == 0 else 100,
        maximum=50 if kind == 20 else 100,
        extra_mode=", exact" if kind == 30 else "",
        required=", limit" if kind == 40 else "",
        output_extra="\n    cursor: {type: string}" if kind == 0 else "",
        read_only="false" if kind == 20 else "true",
    )


def generate(root: Path, count: int, head: bool) -> None:
    tools = root / "tools.d"
    tools.mkdir(parents=True)
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [.]\n")
    (root / "bench_handler.py").write_text("def run(args):\n    return {}\n")
    for i in range(count):
        if head and i == 5:
            continue  # removed
        changed = head and i % 10 == 0
        (tools / f"tool_{i:04d}.yaml").write_text(_tool(i, changed))
    if head:
        (tools / "tool_new.yaml").write_text(
            _tool(count, False).replace(f"tool_{count:04d}", "tool_new")
        )


def _cpu() -> float:
    """CPU seconds (user + system) of this process and its finished children."""
    own, kids = (
        resource.getrusage(resource.RUSAGE_SELF),
        resource.getrusage(resource.RUSAGE_CHILDREN),
    )
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def best(fns: dict[str, Callable[[], object]], repeat: int) -> dict[str, tuple[float, float]]:
    """Best (wall, CPU) seconds of each function, rounds interleaved so machine noise hits all
    alike. CPU time is what the run costs; wall time also counts waiting for a busy machine."""
    times: dict[str, list[tuple[float, float]]] = {name: [] for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            start, cpu = time.perf_counter(), _cpu()
            fn()
            times[name].append((time.perf_counter() - start, _cpu() - cpu))
    return {
        name: (min(w for w, _ in values), min(c for _, c in values))
        for name, values in times.items()
    }


def _row(label: str, value: tuple[float, float], note: str = "") -> str:
    wall, cpu = value
    return f"{label:<40} {wall * 1000:8.1f} ms wall {cpu * 1000:8.1f} ms CPU{note}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()

    from toolctl.config import project_at
    from toolctl.contract import diff, registry_side
    from toolctl.contract.report import render_text
    from toolctl.loader import load_registry
    from toolctl.registry import Registry

    with tempfile.TemporaryDirectory() as tmp:
        old_root, new_root = Path(tmp, "old"), Path(tmp, "new")
        generate(old_root, args.tools, head=False)
        generate(new_root, args.tools, head=True)

        def load_both() -> tuple[Registry, Registry]:
            return (
                load_registry(project=project_at(old_root)),
                load_registry(project=project_at(new_root)),
            )

        def peer() -> int:
            a, b = load_both()
            snap_a = {n: json.dumps(s.raw, sort_keys=True) for n, s in a.tools.items()}
            snap_b = {n: json.dumps(s.raw, sort_keys=True) for n, s in b.tools.items()}
            modified = [n for n in snap_a.keys() & snap_b.keys() if snap_a[n] != snap_b[n]]
            return len(snap_a.keys() ^ snap_b.keys()) + len(modified)

        found: list[int] = []

        def toolctl_diff() -> None:
            a, b = load_both()
            result = diff(registry_side(a, "old"), registry_side(b, "new"))
            render_text(result)
            found.append(len(result.changes))

        load_both()  # warm imports and caches for every contender
        warm = best({"floor": load_both, "peer": peer, "toolctl": toolctl_diff}, args.repeat)
        subprocess.run(
            [sys.executable, "-m", "toolctl", "lock", "--force"],
            cwd=old_root,
            capture_output=True,
            check=True,
        )
        (new_root / "toolctl.lock").write_bytes((old_root / "toolctl.lock").read_bytes())
        summary: list[str] = []
        cold = best(
            {
                "floor": lambda: subprocess.run(
                    [sys.executable, "-c", COLD_LOAD, str(old_root), str(new_root)], check=True
                ),
                "command": lambda: summary.append(
                    _command(["diff", str(old_root), str(new_root)], new_root)
                ),
                "locked": lambda: _command(["diff"], new_root),
            },
            max(1, args.repeat // 2),
        )
        budget = " (budget < 2000 ms)"
        print(f"tools: {args.tools} per registry, changes found: {found[-1]} ({summary[-1]})")
        print(_row("floor   (load both registries):", warm["floor"]))
        print(_row("peer    (snapshot diff, unclassified):", warm["peer"]))
        print(_row("toolctl (load both, classify, render):", warm["toolctl"]))
        (ours_wall, ours_cpu), (floor_wall, floor_cpu) = warm["toolctl"], warm["floor"]
        print(_row("  of which beyond the floor:", (ours_wall - floor_wall, ours_cpu - floor_cpu)))
        print(_row("floor, cold (a new process loads both):", cold["floor"]))
        print(_row("toolctl diff A B (command, cold start):", cold["command"], budget))
        print(_row("toolctl diff (lock file vs tree, cold):", cold["locked"], budget))
        ratio = {k: v[1] for k, v in warm.items()}
        print(
            f"CPU: toolctl / floor = {ratio['toolctl'] / ratio['floor']:.2f}x, "
            f"toolctl / peer = {ratio['toolctl'] / ratio['peer']:.2f}x, command / cold floor = "
            f"{cold['command'][1] / cold['floor'][1]:.2f}x"
        )


def _command(argv: list[str], cwd: Path) -> str:
    """Run ``toolctl ARGV`` in a fresh process; its summary line."""
    done = subprocess.run(
        [sys.executable, "-m", "toolctl", *argv],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode not in (0, 1) or not done.stdout.strip():
        raise SystemExit(f"toolctl {' '.join(argv)} failed: {done.stderr[-2000:]}")
    return done.stdout.strip().splitlines()[-1]


if __name__ == "__main__":
    main()
