"""Benchmark: ``lint`` and ``export`` on generated tools against ``validate`` on the same files.

Budget: lint and export (which load and validate first) each stay within 1.5x validate, at
10,000 tools too (``--tools 10000``). Prints the medians, the ratios and the time the cyclic
garbage collector took in each; no assertion (timings are not tests). The tools are the
realistic ones of ``corpus.py`` (``--corpus synthetic``: this script's own, one shape).
Run: ``python bench/bench_lint.py [--tools N] [--rounds R] [--corpus realistic|synthetic]``.
"""

from __future__ import annotations

import argparse
import gc
import statistics
import tempfile
import time
from pathlib import Path

from corpus import add_corpus_option, verdict, write_registry

from toolctl.cache import DEFAULTS
from toolctl.config import project_for
from toolctl.export import export_result
from toolctl.lint import config_for, lint
from toolctl.loader import load_registry

TOOL = """\
toolctl: 1
name: tool_{i}
title: Tool {i}
description: >-
  Look up record {i} in the inventory and return its name, quantity, location and last update.
  Use it before answering any question about stock levels of item {i}.
inputSchema:
  type: object
  properties:
    itemId: {{type: string, description: Item id., pattern: "^IT-[0-9]+$", maxLength: 16}}
    warehouse: {{type: string, enum: [north, south, east, west], description: Warehouse.}}
    limit: {{type: integer, minimum: 1, maximum: 100, default: 10, description: Max rows.}}
    fields:
      type: array
      description: Fields to return.
      items: {{type: string, enum: [name, quantity, location, updated]}}
      uniqueItems: true
  required: [itemId]
  additionalProperties: false
outputSchema:
  type: object
  properties:
    name: {{type: string}}
    quantity: {{type: integer, minimum: 0}}
    location: {{type: string}}
  required: [name, quantity]
mcp:
  annotations: {{readOnlyHint: true, openWorldHint: false}}
inputExamples:
  - input: {{itemId: IT-{i}, warehouse: north}}
tests:
  - name: finds_item
    input: {{itemId: IT-{i}}}
    outputContains: {{name: Item {i}}}
"""


LINT_CONFIG = "lint: {budget: {registry: 1000000}}\n"  # no finding for the registry's size


def _generate(root: Path, count: int) -> None:
    (root / "tools.d").mkdir()
    for i in range(count):
        (root / "tools.d" / f"tool_{i:05d}.yaml").write_text(TOOL.format(i=i), encoding="utf-8")
    (root / "toolctl.yaml").write_text("tools: tools.d\n" + LINT_CONFIG)


def _validate(root: Path) -> int:
    registry = load_registry(project=project_for(root / "tools.d"), packs=False)
    return len(registry.diagnostics)


def _lint(root: Path) -> int:
    registry = load_registry(project=project_for(root / "tools.d"), packs=False)
    return len(lint(registry, config=config_for(registry)))


def _export(root: Path) -> int:
    registry = load_registry(project=project_for(root / "tools.d"), packs=False)
    result = export_result(registry, "openai")
    return len(result.diagnostics)


class _GcClock:
    """Total time spent in cyclic garbage collections (``gc.callbacks``)."""

    def __init__(self) -> None:
        self.total = 0.0
        self._start = 0.0

    def __call__(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._start = time.perf_counter()
        else:
            self.total += time.perf_counter() - self._start


def main(count: int = 1000, rounds: int = 5, corpus: str = "realistic") -> None:
    DEFAULTS.freeze = True  # as the CLI does: a loaded registry is not scanned by the collector
    clock = _GcClock()
    gc.callbacks.append(clock)
    steps = (("validate", _validate), ("lint", _lint), ("export", _export))
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        write_registry(corpus, root, count, 1, lambda: _generate(root, count))
        if corpus != "synthetic":
            with (root / "toolctl.yaml").open("a", encoding="utf-8") as config:
                config.write(LINT_CONFIG)
        _lint(root)  # warm imports and caches for all
        times: dict[str, list[float]] = {name: [] for name, _ in steps}
        cpu_times: dict[str, list[float]] = {name: [] for name, _ in steps}
        gc_times: dict[str, list[float]] = {name: [] for name, _ in steps}
        findings = 0
        for _ in range(rounds):
            for name, fn in steps:
                gc_before = clock.total
                start, cpu_start = time.perf_counter(), time.process_time()
                found = fn(root)
                times[name].append(time.perf_counter() - start)
                cpu_times[name].append(time.process_time() - cpu_start)
                gc_times[name].append(clock.total - gc_before)
                findings = found if name == "lint" else findings
        med = {k: statistics.median(v) for k, v in times.items()}
        cpu = {k: statistics.median(v) for k, v in cpu_times.items()}
        gcm = {k: statistics.median(v) for k, v in gc_times.items()}
        print(f"{corpus} corpus, tools: {count}, rounds: {rounds}, lint findings: {findings}")
        print("medians, each including loading; cpu = process time (not inflated by a busy core)")
        for name, _ in steps:
            print(
                f"{name + ':':9} {med[name] * 1000:9.1f} ms, cpu {cpu[name] * 1000:9.1f} ms"
                f" (gc {gcm[name] * 1000:.1f} ms)"
            )
        print(f"lint rules alone: {(med['lint'] - med['validate']) * 1000:8.1f} ms")
        for name in ("lint", "export"):
            ratio = cpu[name] / cpu["validate"]
            print(
                f"ratio {name}/validate: {med[name] / med['validate']:.2f},"
                f" cpu {ratio:.2f} {verdict(ratio, 1.5)}"
            )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tools", type=int, default=1000, help="number of one-tool files")
    parser.add_argument("--rounds", type=int, default=5, help="timed rounds (median)")
    add_corpus_option(parser)
    args = parser.parse_args()
    main(args.tools, args.rounds, args.corpus)
