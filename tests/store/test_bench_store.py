"""bench/bench_store.py and bench/bench_queue.py run and print their comparisons (no timing
asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from bench import pgcluster

REPO = Path(__file__).resolve().parents[2]


def _bench(cluster: pgcluster.Cluster, script: str, *args: str) -> str:
    """The output of ``bench/<script> ARGS`` on this worker's cluster (the scripts start one of
    their own when run by hand: an initdb and a server start each, saved here)."""
    out = subprocess.run(
        [sys.executable, str(REPO / "bench" / script), *args],
        capture_output=True,
        text=True,
        check=True,
        timeout=280,
        env={**os.environ, pgcluster.REUSE_ENV: pgcluster.reuse_value(cluster)},
    ).stdout
    assert pgcluster.PASSWORD not in out
    return out


@pytest.mark.timeout(300)
def test_bench_store_prints_both_tables(pg: pgcluster.Cluster) -> None:
    out = _bench(
        pg,
        "bench_store.py",
        "--calls",
        "20",
        "--rounds",
        "1",
        "--load-calls",
        "12",
        "--clients",
        "2",
        "--in-flight",
        "4",
    )
    assert out.count("PostgreSQL / SQLite recording cost:") == 4, out  # 2 tools, 2 ways
    assert "add_plain (plain tool, 2 writes), registry.acall, 4 in flight:" in out
    rows = [line.split() for line in out.splitlines() if line.strip()[:1] in "123"]
    assert [row[0] for row in rows[-3:]] == ["1", "2", "3"]


@pytest.mark.timeout(300)
def test_bench_queue_prints_its_comparison(pg: pgcluster.Cluster) -> None:
    out = _bench(pg, "bench_queue.py", "--calls", "5", "--rounds", "1")
    names = ["row update only (floor)", "queue.enqueue", "Procrastinate opened per call"]
    assert all(name in out for name in names), out
    assert "queue.enqueue / opened per call =" in out
