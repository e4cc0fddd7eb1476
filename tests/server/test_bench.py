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
    for q in ("p50", "p99"):
        ratio = rf"toolctl / floor\s+= \d+\.\d\dx {q} \(budget <= 1\.30x\) (OK|OVER)"
        assert len(re.findall(ratio, out)) == 2, q
    assert len(re.findall(r"toolctl / MCPServer = \d+\.\d\dx p50 \(budget < 1\.00x\)", out)) == 2
    like_for_like = r"toolctl / MCPServer, both without a run history = \d+\.\d\dx p50 \(budget"
    assert re.search(like_for_like, out)
    assert re.search(
        r"run history in toolctl's server \(p50, on - off\): read-only tool \(1 write\) -?\d+ us, "
        r"not read-only \(2 writes\) -?\d+ us \(budget <= 140 us\) (OK|OVER)",
        out,
    )
    assert "tools/list with 1000 tools over stdio" in out


# slow: starts three HTTP servers and drives each with SDK clients
@pytest.mark.timeout(240)
def test_bench_http_prints_every_server_at_every_concurrency_and_the_ratios() -> None:
    args = ("--calls", "12", "--rounds", "2", "--clients", "1,3", "--load", "sdk")
    out = run_bench("bench_http.py", *args, timeout=230)
    assert "uvicorn's HTTP parser: " in out
    row = r"\n  {}\s+\d+\s+\d+\.\d\d\s+\d+\.\d\d\s+\d+\.\d\d\s+\d+\.\d\d\n"
    for heading in ("1 concurrent client, 12 calls", "3 concurrent clients, 12 calls"):
        section = out.split(heading, 1)[1].split("concurrent client", 1)[0]
        for label in ("lowlevel \\(floor\\)", "MCPServer", "toolctl serve"):
            assert re.search(row.format(label), section), (heading, label)
        for what in ("CPU/call", "calls/s ", "p99     "):
            # CPU time comes in clock ticks: so few calls may measure none (then n/a).
            assert re.search(
                rf"toolctl / MCPServer {what} = (\d+\.\d\dx \(budget [<>]= 1\.00x\) (OK|OVER); "
                r"toolctl / floor = \d+\.\d\dx|n/a \(too few calls to measure\))\n",
                section,
            ), (heading, what)
