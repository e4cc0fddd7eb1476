"""Benchmark: ``lint`` on 1,000 generated tools against ``validate`` on the same files.

Budget: lint (which loads and validates first) stays within 2x validate. Prints the timings and
the ratio; no assertion (timings are not tests). Run: ``python bench/bench_lint.py [N]``.
"""

from __future__ import annotations

import statistics
import sys
import tempfile
import time
from pathlib import Path

from toolctl.config import project_for
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


def _generate(root: Path, count: int) -> None:
    (root / "tools.d").mkdir()
    for i in range(count):
        (root / "tools.d" / f"tool_{i:04d}.yaml").write_text(TOOL.format(i=i), encoding="utf-8")
    (root / "toolctl.yaml").write_text("tools: tools.d\nlint: {budget: {registry: 1000000}}\n")


def _validate(root: Path) -> int:
    registry = load_registry(project=project_for(root / "tools.d"), packs=False)
    return len(registry.diagnostics)


def _lint(root: Path) -> int:
    registry = load_registry(project=project_for(root / "tools.d"), packs=False)
    return len(lint(registry, config=config_for(registry)))


def main(count: int = 1000, rounds: int = 5) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        _generate(root, count)
        _lint(root)  # warm imports and caches for both
        times: dict[str, list[float]] = {"validate": [], "lint": []}
        findings = 0
        for _ in range(rounds):
            for name, fn in (("validate", _validate), ("lint", _lint)):
                start = time.perf_counter()
                found = fn(root)
                times[name].append(time.perf_counter() - start)
                findings = found if name == "lint" else findings
        med = {k: statistics.median(v) for k, v in times.items()}
        print(f"tools: {count}, rounds: {rounds}, lint findings: {findings}")
        print(f"validate: {med['validate'] * 1000:8.1f} ms (median)")
        print(f"lint:     {med['lint'] * 1000:8.1f} ms (median, includes loading)")
        print(f"lint rules alone: {(med['lint'] - med['validate']) * 1000:8.1f} ms")
        print(f"ratio lint/validate: {med['lint'] / med['validate']:.2f} (budget 2.00)")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1000)
