"""``bench/bench_diff.py`` runs and prints its comparison (no timing asserted)."""

from __future__ import annotations

import re

import pytest

from tests.bench_helpers import run_bench


@pytest.mark.timeout(240)
def test_bench_diff_prints_floor_peer_and_the_commands() -> None:  # slow
    out = run_bench("bench_diff.py", "--tools", "40", "--repeat", "2", timeout=230)
    assert re.search(r"tools: 40 per registry, changes found: \d+ \(\d+ breaking", out)
    for label in (
        "floor   (load both registries)",
        "peer    (snapshot diff",
        "toolctl (load both",
        "floor, cold",
        "toolctl diff A B",
        "toolctl diff (lock file vs tree",
    ):
        assert re.search(re.escape(label) + r".*\d+\.\d ms", out), label
    assert re.search(r"toolctl / floor = \d+\.\d\dx, toolctl / peer = \d+\.\d\dx", out)
