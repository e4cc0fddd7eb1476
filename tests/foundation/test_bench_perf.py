"""The start-up, cache and lint benchmarks run and print what the README shows (no timing
asserted: the numbers are for people, the shape of the output is for this test)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.bench_helpers import run_bench

# slow: each test starts many processes


@pytest.mark.timeout(240)
def test_bench_startup_prints_every_command_beside_the_reference() -> None:
    out = run_bench("bench_startup.py", "--runs", "1", "--realistic", "8", timeout=230)
    row = r"{}\s+\d+\.\d\s+\d+\.\d\d\s+\d+\.\d\s+\d+\.\d\d"
    assert re.search(row.format(r"python -c 'import yaml'") + r"\s*$", out, re.M)
    for label in ("toolctl --version", "toolctl --no-cache validate", "toolctl lint"):
        assert re.search(row.format(re.escape(label)), out), label
    verdict = r"\s+<= {}x: wall (ok|OVER), cpu (ok|OVER)"
    assert re.search(row.format("toolctl validate") + verdict.format(r"3\.0"), out)
    assert re.search(row.format("toolctl run reverse") + verdict.format(r"4\.0"), out)
    assert re.search(row.format("toolctl lint, realistic") + verdict.format(r"4\.0"), out)
    realistic_export = re.escape("toolctl export -f openai, realistic")
    assert re.search(row.format(realistic_export) + verdict.format(r"3\.0"), out)


@pytest.mark.timeout(240)
def test_bench_cache_prints_warm_and_cold_beside_the_floor() -> None:
    out = run_bench("bench_cache.py", "--tools", "30", "--runs", "1", timeout=230)
    assert "realistic corpus, 30 tools, one tool per file" in out
    row = r"{}\s+\d+\s+\d+\.\d\d\s+\d+\s+\d+\.\d\d\s+\d+\.\d"
    for label in (
        "floor \\(CSafeLoader parse\\)",
        "toolctl validate, warm",
        "toolctl validate, cold",
    ):
        assert re.search(row.format(label), out), label
    assert re.search(r"floor \(CSafeLoader parse\)\s+\d+\s+1\.00\s+\d+\s+1\.00\s", out)
    verdict = r"\s+(ok|OVER) \(<= {}x\)"
    assert re.search(row.format("toolctl validate, warm") + verdict.format(r"0\.50"), out)
    assert re.search(row.format("toolctl validate, cold") + verdict.format(r"1\.50"), out)
    assert re.search(row.format("toolctl --no-cache validate") + verdict.format(r"1\.30"), out)


@pytest.mark.timeout(240)
def test_bench_cache_puts_a_base_checkout_beside_this_one_in_the_same_rounds() -> None:
    # --base: each command also runs with another checkout's src first on PYTHONPATH (here
    # this one's: the rows must exist and carry the same budgets, not differ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    out = run_bench("bench_cache.py", "--tools", "10", "--runs", "1", "--base", src, timeout=230)
    row = r"{}\s+\d+\s+\d+\.\d\d\s+\d+\s+\d+\.\d\d\s+\d+\.\d\s+(ok|OVER) \(<= {}x\)"
    for side in ("before", "after"):
        for label, budget in (
            ("toolctl validate, warm", r"0\.50"),
            ("toolctl validate, cold", r"1\.50"),
            ("toolctl --no-cache validate", r"1\.30"),
        ):
            assert re.search(row.format(f"{label}, {side}", budget), out), (label, side)


@pytest.mark.timeout(240)
def test_bench_lint_prints_lint_and_export_beside_validate() -> None:
    out = run_bench("bench_lint.py", "--tools", "30", "--rounds", "1", timeout=230)
    assert "realistic corpus, tools: 30, rounds: 1" in out
    for name in ("validate", "lint", "export"):
        assert re.search(rf"{name}:\s+\d+\.\d ms, cpu\s+\d+\.\d ms \(gc \d+\.\d ms\)", out)
    for name in ("lint", "export"):
        assert re.search(
            rf"ratio {name}/validate: \d+\.\d\d, cpu \d+\.\d\d (ok|OVER) \(<= 1\.50x\)", out
        )


@pytest.mark.timeout(240)
def test_bench_memory_prints_peaks_beside_no_cache_validate() -> None:
    out = run_bench("bench_memory.py", "--tools", "20", "--per-file", "10", timeout=230)
    row = r"^\s+20 {}\s+\d+\.\d\s+\d+\.\d\s+\d+\.\d\d\s+\d+\s+\d+\.\d\d$"
    for label in ("validate --no-cache", "validate, warm", "export mcp, cold", "export mcp, warm"):
        assert re.search(row.format(re.escape(label)), out, re.M), label
    assert re.search(r"^20 tools: validate --no-cache \d+ MiB \((ok|OVER);", out, re.M)
    assert re.search(r"export mcp \d+\.\d\dx it \((ok|OVER); budget 1\.5x\)", out)
