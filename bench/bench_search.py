"""Search quality on a public catalog: toolctl search vs FastMCP's BM25SearchTransform.

    python bench/bench_search.py [--fastmcp-python PATH] [--split heldout|tune|all]

The catalog and queries come from the Berkeley Function Calling Leaderboard's non-live
categories (bench/search_prepare.py derives bench/data/search/ from a gorilla checkout); the
no-answer queries (greetings, chat, general knowledge) are bench/data/search/noanswer.jsonl.
Reports top-1 and top-5 (a query counts when an expected function is first / in the first 5)
over the answerable queries, and the share of no-answer queries for which any tool is returned,
per split. toolctl's fusion weight and its decision of whether any tool fits were fitted on
the ``tune`` splits only (bench/search_tune.py).

FastMCP runs in its own environment (``--fastmcp-python``, a python with ``fastmcp``
installed): bench/search_fastmcp.py ranks the same catalog and queries there, in this run.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from toolctl.search import embed
from toolctl.search.docs import tool_fields
from toolctl.search.index import SearchIndex

DATA = Path(__file__).parent / "data" / "search"
K = 5


def read_jsonl(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


# dataset -> (its catalog files, its query files); noanswer.jsonl is added to every one
DATASETS = {
    "bfcl": (("catalog",), ("queries",)),
    "metatool": (("metatool_catalog",), ("metatool_queries",)),
    # MetaTool's plugins among BFCL's functions, real no-answer prompts (search_prepare.py)
    "metatool1k": (("metatool_catalog", "catalog"), ("metatool_queries", "metatool1k_queries")),
}


def catalog(dataset: str = "bfcl") -> list[dict[str, Any]]:
    return [f for name in DATASETS[dataset][0] for f in read_jsonl(DATA / f"{name}.jsonl")]


def queries(dataset: str = "bfcl") -> list[dict[str, Any]]:
    files = (*DATASETS[dataset][1], "noanswer")
    return [q for name in files for q in read_jsonl(DATA / f"{name}.jsonl")]


def build(functions: list[dict[str, Any]], semantic: bool) -> SearchIndex:
    docs = [tool_fields(f["name"], f.get("description"), f.get("parameters")) for f in functions]
    return SearchIndex.build(
        [f["name"] for f in functions], docs, embed.load() if semantic else None
    )


def score(results: list[list[str]], rows: list[dict[str, Any]]) -> dict[str, float]:
    """top1/top5 over answerable rows, returned share over no-answer rows, in percent."""
    answerable = [(r, q) for r, q in zip(results, rows, strict=False) if q["expected"]]
    none = [r for r, q in zip(results, rows, strict=False) if not q["expected"]]
    top1 = sum(bool(r) and r[0] in q["expected"] for r, q in answerable)
    top5 = sum(any(n in q["expected"] for n in r[:K]) for r, q in answerable)
    return {
        "n": len(answerable),
        "top1": 100.0 * top1 / max(1, len(answerable)),
        "top5": 100.0 * top5 / max(1, len(answerable)),
        "noanswer_n": len(none),
        "noanswer_returned": 100.0 * sum(bool(r) for r in none) / max(1, len(none)),
    }


def run_toolctl(index: SearchIndex, rows: list[dict[str, Any]]) -> list[list[str]]:
    embedder = embed.load() if index.semantic else None
    return [[h.name for h in index.query(q["query"], K, embedder)] for q in rows]


def run_fastmcp(python: str, rows: list[dict[str, Any]], dataset: str) -> list[list[str]]:
    script = Path(__file__).parent / "search_fastmcp.py"
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "catalog.jsonl"  # the dataset's catalog files as one
        path.write_text("".join(json.dumps(f) + "\n" for f in catalog(dataset)), "utf-8")
        out = subprocess.run(
            [python, str(script), str(path), str(K)],
            input="".join(json.dumps({"query": q["query"]}) + "\n" for q in rows),
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    return [json.loads(line) for line in out.splitlines()]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--fastmcp-python", help="a python with fastmcp installed")
    parser.add_argument("--split", default="heldout", choices=("heldout", "tune", "all"))
    parser.add_argument(
        "--dataset",
        default="bfcl",
        choices=tuple(DATASETS),
        help="bfcl (1,132 functions, synthetic queries), metatool (199 plugins, paraphrased "
        "queries) or metatool1k (those plugins among BFCL's functions: 1,331; paraphrased "
        "queries, real no-answer prompts)",
    )
    args = parser.parse_args()
    functions = catalog(args.dataset)
    rows = [q for q in queries(args.dataset) if args.split == "all" or q["split"] == args.split]
    print(
        f"catalog: {len(functions)} functions ({args.dataset}); split {args.split}: "
        f"{sum(bool(q['expected']) for q in rows)} queries, "
        f"{sum(not q['expected'] for q in rows)} no-answer queries"
    )
    systems: list[tuple[str, list[list[str]]]] = []
    if args.fastmcp_python:
        systems.append(
            ("fastmcp BM25SearchTransform", run_fastmcp(args.fastmcp_python, rows, args.dataset))
        )
    for semantic in (False, True):
        if semantic and not embed.available():
            print("toolctl semantic: skipped (pip install 'toolctl-registry[search]')")
            continue
        start = time.perf_counter()
        index = build(functions, semantic)
        built = time.perf_counter() - start
        label = "toolctl search" + (" (lexical + embeddings)" if semantic else " (lexical only)")
        systems.append((label, run_toolctl(index, rows)))
        print(f"{label}: index built in {built:.2f} s")
    print(f"\n{'system':40} {'top-1':>7} {'top-5':>7} {'no-answer returned':>19}")
    for label, results in systems:
        s = score(results, rows)
        print(f"{label:40} {s['top1']:6.1f}% {s['top5']:6.1f}% {s['noanswer_returned']:18.1f}%")


if __name__ == "__main__":
    main()
