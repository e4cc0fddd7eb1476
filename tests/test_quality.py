"""The codebase's own habits, checked like any other behaviour: ruff lint + format, mypy strict."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *args], cwd=REPO, capture_output=True, text=True, timeout=600
    )


@pytest.mark.timeout(600)
def test_ruff_lint_is_clean() -> None:
    result = _run("ruff", "check", "src", "tests", "examples", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.timeout(600)
def test_ruff_format_is_clean() -> None:
    result = _run("ruff", "format", "--check", "src", "tests", "examples", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.timeout(900)
def test_mypy_strict_is_clean() -> None:
    result = _run("mypy")
    assert result.returncode == 0, result.stdout + result.stderr
