"""``bench/bench_call.py`` runs and prints its ratios (no timing asserted)."""

from __future__ import annotations

import re

import pytest

from tests.bench_helpers import run_bench


@pytest.mark.timeout(120)
def test_bench_call_prints_the_sync_and_async_ratios() -> None:
    out = run_bench("bench_call.py", "--calls", "40", "--repeat", "1", timeout=110)
    assert re.search(r"history off: +[\d.]+ us/call +ratio [\d.]+x floor", out)
    for row in ("registry.call", "registry.acall alone", "registry.acall, 8 in flight"):
        for tool, writes in (("", "2 writes"), (", read-only( tool)?", "1 write")):
            assert re.search(
                rf"{row}{tool}: +[\d.]+ us/call +history costs +-?[\d.]+ us "
                rf"\([\d.-]+x the 280 us baseline, {writes}\)",
                out,
            ), (row, tool)
    assert re.search(r"budget: history cost <= 140 us/call .* (within budget|OVER BUDGET)", out)
