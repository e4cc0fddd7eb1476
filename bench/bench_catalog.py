"""Benchmark: how much of a large catalog a model sees up front, per provider.

Usage::

    python bench/bench_catalog.py                  # 1,000 tools in 100 toolsets, 3 eager
    python bench/bench_catalog.py --tools 5000 --eager-toolsets 2

Generates a project of ``--tools`` tools in toolsets of ten (most deferred; ``--eager-toolsets``
of them eager), exports it, and prints for each provider the bytes of the definitions a model
gets with every request (eager tools, the tool search tool, namespace names) beside the full
catalog's bytes. ``--corpus``: the realistic tools of ``corpus.py`` (the default; one per
file, a ``toolset:`` line added to each) or this script's own synthetic ones. The target of
issue 24: at most 15% for anthropic, openai-responses and ``serve --search``'s ``tools/list``
(``mcp-search``). Exits 1 when one of those is above it.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

TARGET = 0.15
CHECKED = ("anthropic", "openai-responses", "mcp-search")
VERBS = (
    "get",
    "list",
    "create",
    "update",
    "delete",
    "search",
    "export",
    "archive",
    "sync",
    "count",
)
THINGS = (
    "invoice", "customer", "order", "ticket", "shipment", "payment", "refund", "product",
    "subscription", "report", "user", "team", "project", "document", "calendar_event",
    "message", "contract", "lead", "campaign", "asset",
)  # fmt: skip


def tool_yaml(index: int, toolset: str, verb: str, thing: str) -> str:
    """One generated tool: a realistic name, description and input schema."""
    return f"""\
  - name: {verb}_{thing}_{index}
    title: {verb.title()} {thing.replace("_", " ")} ({index})
    description: >-
      {verb.title()} {thing.replace("_", " ")} records in system {index}. Use it when the user
      asks to {verb} a {thing.replace("_", " ")}; returns the matching records as JSON.
    toolset: {toolset}
    inputSchema:
      type: object
      properties:
        id: {{type: string, description: The {thing.replace("_", " ")} identifier.}}
        limit: {{type: integer, minimum: 1, maximum: 100, description: Most records returned.}}
        filter: {{type: string, description: A free-text filter on the records.}}
      required: [id]
      additionalProperties: false
"""


def generate(root: Path, tools: int = 1000, per_toolset: int = 10, eager_toolsets: int = 3) -> Path:
    """Write a project of ``tools`` tools in toolsets of ``per_toolset`` under ``root``; the
    first ``eager_toolsets`` toolsets are eager, the rest deferred. Returns ``root``."""
    (root / "tools.d").mkdir(parents=True, exist_ok=True)
    config = ["toolsets:"]
    count = -(-tools // per_toolset)
    for t in range(count):
        thing = THINGS[t % len(THINGS)]
        loading = "eager" if t < eager_toolsets else "deferred"
        config += [
            f"  set{t}:",
            f"    description: {thing.replace('_', ' ').title()} tools of system {t}",
            f"    loading: {loading}",
        ]
        body = ["toolctl: 1", "tools:"]
        for i in range(t * per_toolset, min(tools, (t + 1) * per_toolset)):
            body.append(tool_yaml(i, f"set{t}", VERBS[i % len(VERBS)], thing))
        (root / "tools.d" / f"set{t}.yaml").write_text("\n".join(body), encoding="utf-8")
    (root / "toolctl.yaml").write_text("\n".join(config) + "\n", encoding="utf-8")
    return root


def realistic(
    root: Path,
    tools: int = 1000,
    per_toolset: int = 10,
    eager_toolsets: int = 3,
    corpus: str = "realistic",
) -> None:
    """The ``corpus`` registry (corpus.py's, or the held-out one) under ``root``, its tools in
    toolsets as :func:`generate` makes."""
    from corpus import writer  # bench/ is on sys.path when run as a script

    writer(corpus)(root, tools)
    files = sorted(p for p in (root / "tools.d").glob("*.yaml"))
    for i, path in enumerate(files):
        text = path.read_text(encoding="utf-8")
        head = f"toolctl: 1\ntoolset: set{i // per_toolset}\n"
        path.write_text(text.replace("toolctl: 1\n", head, 1), encoding="utf-8")
    config = ["tools: tools.d", "pythonPath: [.]", "toolsets:"]
    for t in range(-(-tools // per_toolset)):
        loading = "eager" if t < eager_toolsets else "deferred"
        config += [f"  set{t}:", f"    description: Tools of system {t}", f"    loading: {loading}"]
    (root / "toolctl.yaml").write_text("\n".join(config) + "\n", encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tools", type=int, default=1000)
    parser.add_argument("--eager-toolsets", type=int, default=3)
    from corpus import add_corpus_option

    add_corpus_option(parser)
    args = parser.parse_args()

    import toolctl
    from toolctl.export.upfront import DEFAULT_FORMATS, measure

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        if args.corpus != "synthetic":
            realistic(root, args.tools, 10, args.eager_toolsets, args.corpus)
        else:
            generate(root, args.tools, 10, args.eager_toolsets)
        registry = toolctl.load_project(root)
        print(f"{args.corpus} corpus: {len(registry)} tools, {len(registry.toolsets)} toolsets")
        print(f"{'format':<18}{'up front':>10}{'full':>11}{'share':>8}  tools up front")
        failed = False
        for fmt in DEFAULT_FORMATS:
            row = measure(registry, fmt, infos=False)
            mark = ""
            if fmt in CHECKED:
                ok = row.share <= TARGET
                failed |= not ok
                mark = "  ok (<= 15%)" if ok else "  OVER 15%"
            print(
                f"{fmt:<18}{row.bytes:>10,}{row.full_bytes:>11,}{row.share:>8.1%}  "
                f"{row.tools}/{row.total}{mark}"
            )
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
