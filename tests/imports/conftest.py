"""Shared pieces of the import tests: the fixture specs, and a project to import into."""

from __future__ import annotations

from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"
PETSTORE = FIXTURES / "petstore.yaml"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project (``toolctl.yaml`` naming ``tools.d``) as the working directory."""
    (tmp_path / "toolctl.yaml").write_text("tools: [tools.d]\n")
    (tmp_path / "tools.d").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path
