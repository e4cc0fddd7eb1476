"""Fit toolctl search's decision of whether any tool fits (toolctl.search.decide) and the
lexical-only floor (LEXICAL_FLOOR) on the ``tune`` splits of the benchmarks only
(bench/bench_search.py reports the held-out splits).

    python bench/search_tune.py

Three catalogs are fitted together, each weighted alike: BFCL's (1,132 functions, synthetic
queries, written no-answer queries), MetaTool's 199 plugins and metatool1k (those plugins among
BFCL's functions), the last two with MetaTool's paraphrased tune queries and the real user
prompts no tool serves. The decision is a logistic model over toolctl.search.decide.FEATURES:
answerable queries whose tool is in the first five against no-answer queries; its bias is then
moved so that at most TARGET of each catalog's no-answer queries get a tool. Before trusting it,
the script fits on one catalog and scores the others (the reviewers' catalog is none of these);
MetaTool's and metatool1k's queries are the same, so the cross-check pairs BFCL with metatool1k.
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from bench_search import K, catalog, queries

from toolctl.search import decide, embed
from toolctl.search.docs import tool_fields

# the module, not toolctl.search.index (a function of the package hides the module's name)
ranking = importlib.import_module("toolctl.search.index")

TARGET = 0.15  # the bound is 25%: room for held-out drift
DATASETS = ("bfcl", "metatool", "metatool1k")
L2 = 1e-3  # a light ridge on the standardised weights


class Remembered:
    """The model, each query encoded once however many catalogs rank it."""

    def __init__(self, embedder: embed.Embedder) -> None:
        self.embedder, self.seen = embedder, {}
        self.dim = embedder.dim

    def embed(self, texts: list[str], limit: int = embed.MAX_TOKENS) -> Any:
        import numpy as np  # after embed.load(), which imports it with one BLAS thread

        missing = [t for t in texts if t not in self.seen]
        if missing:
            self.seen.update(zip(missing, self.embedder.embed(missing, limit), strict=True))
        return np.stack([self.seen[t] for t in texts])


def tune_rows() -> dict[str, list[dict[str, Any]]]:
    """Each catalog's tune queries: MetaTool's plugins are ranked for metatool1k's."""
    mixed = [q for q in queries("metatool1k") if q["split"] == "tune"]
    bfcl = [q for q in queries("bfcl") if q["split"] == "tune"]
    return {"bfcl": bfcl, "metatool": mixed, "metatool1k": mixed}


def indexes(embedder: Any) -> dict[str, tuple[Any, Any]]:
    """dataset -> (lexical-only index, fused index); a tool's vector is encoded once."""
    out, known = {}, {}
    for dataset in DATASETS:
        fns = catalog(dataset)
        names = [f["name"] for f in fns]
        docs = [tool_fields(f["name"], f.get("description"), f.get("parameters")) for f in fns]
        fused = ranking.SearchIndex.build(names, docs, embedder, known)
        known.update(fused.known())
        out[dataset] = (ranking.SearchIndex.build(names, docs, None), fused)
    return out


def observe(idx: Any, rows: list[dict[str, Any]], embedder: Any) -> list[dict[str, Any]]:
    """Per query: is it answerable, is its tool first / in the first five, the features."""
    out = []
    for q in rows:
        best, values = idx.ranked(q["query"], K, embedder)
        names = [idx.names[n] for n, _ in best]
        expected = set(q["expected"])
        out.append(
            {
                "answerable": bool(expected),
                "top1": bool(names) and names[0] in expected,
                "top5": bool(expected & set(names)),
                "x": values if values is not None else ([s for _, s in best] or [0.0])[:1],
            }
        )
    return out


def logistic(obs: dict[str, list[dict[str, Any]]]) -> tuple[list[float], float]:
    """Weights and bias separating answerable queries whose tool is in the first five from
    no-answer ones; each catalog's two classes weigh alike (Newton's method, light ridge)."""
    import numpy as np

    xs, ys, ws = [], [], []
    for rows in obs.values():
        for label, group in (
            (1.0, [r for r in rows if r["answerable"] and r["top5"]]),
            (0.0, [r for r in rows if not r["answerable"]]),
        ):
            xs += [r["x"] for r in group]
            ys += [label] * len(group)
            ws += [1.0 / len(group)] * len(group)
    x, y, w = np.array(xs), np.array(ys), np.array(ws) / sum(ws)
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = np.hstack([(x - mu) / sd, np.ones((len(x), 1))])
    b = np.zeros(z.shape[1])
    ridge = L2 * np.diag([1.0] * (len(b) - 1) + [0.0])
    for _ in range(50):
        p = 1 / (1 + np.exp(-z @ b))
        gradient = z.T @ (w * (p - y)) + ridge @ b
        hessian = (z * (w * p * (1 - p))[:, None]).T @ z + ridge
        b -= np.linalg.solve(hessian, gradient)
    coef = b[:-1] / sd
    return [float(c) for c in coef], float(b[-1] - mu @ coef)


def cut(obs: dict[str, list[dict[str, Any]]], score: Any) -> float:
    """The lowest threshold on ``score`` that gives a tool to at most TARGET of each catalog's
    no-answer queries (the strictest of them)."""
    worst = float("-inf")
    for rows in obs.values():
        none = sorted(score(r["x"]) for r in rows if not r["answerable"])
        if none:
            worst = max(worst, none[int(len(none) * (1 - TARGET))] + 1e-6)
    return worst


def report(label: str, obs: dict[str, list[dict[str, Any]]], score: Any, floor: float) -> None:
    parts = []
    for dataset, rows in obs.items():
        answerable = [r for r in rows if r["answerable"]]
        none = [r for r in rows if not r["answerable"]]
        kept = [r for r in answerable if score(r["x"]) >= floor]
        top1 = 100 * sum(r["top1"] for r in kept) / len(answerable)
        top5 = 100 * sum(r["top5"] for r in kept) / len(answerable)
        returned = 100 * sum(score(r["x"]) >= floor for r in none) / max(1, len(none))
        parts.append(f"{dataset} {top1:5.1f} {top5:5.1f} {returned:5.1f}")
    print(f"{label:36} " + " | ".join(parts), flush=True)


def linear(weights: list[float], bias: float) -> Any:
    return lambda x: sum(w * v for w, v in zip(weights, x, strict=True)) + bias


def main() -> None:
    embedder = Remembered(embed.load())
    rows = tune_rows()
    built = indexes(embedder)
    lexical = {d: observe(built[d][0], rows[d], None) for d in ("bfcl", "metatool1k")}
    floor = cut(lexical, lambda x: x[0])
    print("tune splits, per catalog: top-1 %, top-5 %, no-answer queries given a tool %")
    report(f"lexical only, floor {floor:.3f}", lexical, lambda x: x[0], floor)
    obs = {d: observe(built[d][1], rows[d], embedder) for d in DATASETS}
    report("fused, never abstaining", obs, lambda x: 1.0, 0.0)
    lead = lambda x: x[0] + 0.5 * x[1]  # noqa: E731 (the rule before: best + half its lead)
    report("fused, best + lead/2 floor (before)", obs, lead, cut(obs, lead))
    # cross-check: fitted on one catalog, scored on all (MetaTool's queries are metatool1k's)
    for fitted in (("bfcl",), ("metatool1k",), DATASETS):
        weights, bias = logistic({d: obs[d] for d in fitted})
        score = linear(weights, bias)
        threshold = cut({d: obs[d] for d in fitted}, score)
        report(f"decision fitted on {'+'.join(fitted)}"[:36], obs, score, threshold)
    print("\nFEATURES =", decide.FEATURES)
    print("WEIGHTS =", tuple(round(w, 4) for w in weights))
    print("BIAS =", round(bias - threshold, 4))
    print("LEXICAL_FLOOR =", round(floor, 3))


if __name__ == "__main__":
    main()
