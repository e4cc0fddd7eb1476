"""Shared fixtures: the runner's own example project, copied so tests can add files."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

PROJECT = Path(__file__).parent / "project"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A fresh copy of tests/testing/project as the working directory."""
    root = tmp_path / "project"
    shutil.copytree(PROJECT, root, ignore=shutil.ignore_patterns("__pycache__", ".toolctl"))
    monkeypatch.chdir(root)
    return root
