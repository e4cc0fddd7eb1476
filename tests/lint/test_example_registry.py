"""The example registry in tools.d/ lints clean at the default settings."""

from __future__ import annotations

from pathlib import Path

from toolctl.config import project_for
from toolctl.lint import lint
from toolctl.loader import load_registry

REPO = Path(__file__).resolve().parents[2]


def test_example_registry_lints_clean() -> None:
    registry = load_registry(project=project_for(REPO / "tools.d"), packs=False)
    assert len(registry) >= 5
    assert [d.format() for d in lint(registry)] == []
