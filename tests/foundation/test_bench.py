"""The benchmark script runs and prints the comparison the README shows (no timing asserted)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from toolctl.loader import load_registry

from .conftest import REPO


@pytest.mark.timeout(120)
def test_bench_script_prints_ratios() -> None:
    result = subprocess.run(
        [sys.executable, str(REPO / "bench" / "bench_validate.py"), "--sizes", "10", "--runs", "1"],
        capture_output=True,
        text=True,
        check=True,
        timeout=120,
    )
    lines = result.stdout.splitlines()
    assert "toolctl/floor" in lines[2] and "naive/toolctl" in lines[2]
    assert lines[1].startswith("realistic corpus")  # the default
    assert re.fullmatch(r"\s+10(\s+\d+){3}(\s+\d+\.\d\d){2}  (ok|OVER) \(<= 1\.30x\)", lines[3])
    assert lines[4].startswith("budget at 1,000 tools")
    assert re.fullmatch(
        r"--help: toolctl \d+ ms, minimal typer \d+ ms, ratio \d+\.\d\d .*", lines[5]
    )


def test_generated_registry_is_valid(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "bench"))
    try:
        import bench_validate
    finally:
        sys.path.remove(str(REPO / "bench"))
    root = tmp_path / "reg"
    tools_dir = bench_validate.generate(root, 150, "grouped")
    assert len(list(tools_dir.glob("*.yaml"))) == 2
    registry = load_registry(tools_dir, packs=False)
    assert registry.ok, registry.diagnostics[:3]
    assert len(registry) == 150
