"""``bench/bench_auth.py`` runs and prints what token checking costs (no timing asserted)."""

from __future__ import annotations

import re

import pytest

from tests.bench_helpers import run_bench


@pytest.mark.timeout(240)  # as long as the script's own (230 s), as the other bench tests
def test_bench_auth_prints_both_servers_and_the_overhead() -> None:
    out = run_bench(
        "bench_auth.py",
        "--calls",
        "12",
        "--rounds",
        "2",
        "--clients",
        "3",
        "--checks",
        "20",
        timeout=230,
    )
    row = r"\n  {}\s+\d+\s+\d+\.\d\d\s+\d+\.\d\d\s+\d+\.\d\d\d\n"
    for label in ("no auth", r"auth: \(JWT\)"):
        assert re.search(row.format(label), out), label
    assert re.search(
        r"token checking: ([+-]\d+ us CPU per call = -?\d+\.\d% of a call's CPU \(budget <= 10%\) "
        r"(OK|OVER)|overhead: n/a \(too few calls to measure\))",
        out,
    ), out
    assert re.search(r"one check, in process: \d+\.\d us for a token seen before", out), out
