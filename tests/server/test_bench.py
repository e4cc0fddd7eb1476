"""``bench/bench_serve.py`` runs and prints the comparison the README shows (no timing asserted)."""

from __future__ import annotations

import re

import pytest

from tests.bench_helpers import run_bench


@pytest.mark.timeout(240)
def test_bench_serve_prints_every_server_and_the_ratios() -> None:
    out = run_bench("bench_serve.py", "--calls", "20", "--lists", "2", timeout=230)
    row = r"\s+{}\s+\d+\s+\d+\s+\d+\s+\d+"
    for label in ("lowlevel \\(floor\\)", "MCPServer", "toolctl serve", "on the SDK's stdio"):
        assert re.search(row.format(label), out), label
    for revision in ("2025-11-25", "2026-07-28"):
        assert f"tools/call over stdio, protocol {revision}" in out
    assert len(re.findall(r"toolctl / floor\s+= \d+\.\d\dx \(budget <= 1\.30x\)", out)) == 2
    assert len(re.findall(r"toolctl / MCPServer = \d+\.\d\dx \(budget < 1\.00x\)", out)) == 2
    assert "tools/list with 1000 tools over stdio" in out
