"""Fit toolctl search's fusion weight (ALPHA) and abstention floor (FLOOR, LEXICAL_FLOOR) on
the ``tune`` split of the benchmark only (bench/bench_search.py reports the held-out split).

    python bench/search_tune.py

For each ALPHA it takes the floor that keeps no-answer queries answered at most TARGET of the
time on the tune split, then picks the ALPHA with the best top-1 + top-5 under that floor.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

from bench_search import K, build, catalog, queries

from toolctl.search import embed, index, lexical

TARGET = 0.125  # half the 25% bound: leaves room for held-out drift


class Remembered:
    """The model, each query encoded once however many weights are tried."""

    def __init__(self, embedder: embed.Embedder) -> None:
        self.embedder, self.seen = embedder, {}

    def embed(self, texts: list[str]):
        import numpy as np  # after embed.load(), which imports it with one BLAS thread

        missing = [t for t in texts if t not in self.seen]
        if missing:
            self.seen.update(zip(missing, self.embedder.embed(missing), strict=True))
        return np.stack([self.seen[t] for t in texts])


def ranked(idx: index.SearchIndex, rows: list[dict], embedder: Remembered | None) -> list:
    out = []
    for q in rows:
        scored = idx.scores(q["query"], embedder)
        best = sorted(scored.items(), key=lambda item: -item[1])[:K]
        out.append([(idx.names[n], s) for n, s in best])
    return out


def fit(results: list, rows: list[dict]) -> tuple[float, float, float, float]:
    pairs = zip(results, rows, strict=False)
    none = sorted((r[0][1] if r else 0.0) for r, q in pairs if not q["expected"])
    floor = none[int(len(none) * (1 - TARGET))] + 1e-4 if none else 0.0
    answerable = [(r, q) for r, q in zip(results, rows, strict=False) if q["expected"]]
    kept = [(r, q) for r, q in answerable if r and r[0][1] >= floor]
    top1 = sum(r[0][0] in q["expected"] for r, q in kept) / len(answerable)
    top5 = sum(any(n in q["expected"] for n, _ in r) for r, q in kept) / len(answerable)
    returned = sum(s >= floor for s in none) / max(1, len(none))
    return floor, top1, top5, returned


def main() -> None:
    rows = [q for q in queries() if q["split"] == "tune"]
    functions = catalog()
    lexical_only = build(functions, semantic=False)
    semantic = build(functions, semantic=True)
    embedder = Remembered(embed.load())
    best: tuple[float, str] = (-1.0, "")
    for min_terms in (1, 2, 3, 4, 5):  # more mutes the lexical signal of short queries
        lexical.MIN_TERMS = min_terms
        floor, top1, top5, returned = fit(ranked(lexical_only, rows, None), rows)
        print(
            f"MIN_TERMS={min_terms} lexical only: LEXICAL_FLOOR={floor:.3f} "
            f"top1={top1:.3f} top5={top5:.3f} no-answer={returned:.3f}"
        )
        for alpha in (0.3, 0.4, 0.5, 0.6, 0.7, 0.8):
            index.ALPHA = alpha
            floor, top1, top5, returned = fit(ranked(semantic, rows, embedder), rows)
            line = (
                f"MIN_TERMS={min_terms} ALPHA={alpha:.1f} FLOOR={floor:.3f} "
                f"top1={top1:.3f} top5={top5:.3f} no-answer={returned:.3f}"
            )
            print(line, flush=True)
            best = max(best, (top1 + top5, line))
    print("best:", best[1])


if __name__ == "__main__":
    main()
