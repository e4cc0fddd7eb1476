"""Fixtures for lint tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.lint.lintkit import Project


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Project:
    monkeypatch.chdir(tmp_path)
    return Project(tmp_path)
