"""``bench/bench_call.py`` runs and prints its ratios (no timing asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[2] / "bench" / "bench_call.py"


@pytest.mark.timeout(120)
def test_bench_call_prints_the_sync_and_async_ratios() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--calls", "40", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=110,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(r"history off: +[\d.]+ us/call +ratio [\d.]+x floor", done.stdout)
    assert re.search(r"read-only tool \(1 write\): +[\d.]+ us/call, ratio [\d.]+x", done.stdout)
