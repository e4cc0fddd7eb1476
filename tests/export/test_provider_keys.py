"""A misspelt provider under ``providerOptions`` (``openia:``) is reported, not dropped."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.foundation.conftest import run_toolctl
from toolctl.export import export_result, get_exporter
from toolctl.export.formats import installed
from toolctl.loader import load_registry
from toolctl.spec.providers import PROVIDER_ALIASES

from .conftest import FORMATS

TOOL = """\
toolctl: 1
name: t
description: Look up a thing.
inputSchema: {type: object}
providerOptions:
  openia: {strict: true}
  anthropic: {cache_control: {type: ephemeral}}
  x-ours: {note: kept for our own tooling}
"""
MESSAGE = (
    "tools.d/t.yaml:6:3: {level} TC206 providerOptions key 'openia' is not a provider any "
    "installed export format reads, so no export uses it (hint: did you mean 'openai'?{more})"
)


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "t.yaml").write_text(TOOL)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_validate_warns_with_a_suggestion(project: Path) -> None:
    registry = load_registry(project / "tools.d", packs=False)
    assert registry.ok
    assert [d.format() for d in registry.diagnostics] == [MESSAGE.format(level="warning", more="")]


def test_export_check_refuses_it(project: Path) -> None:
    registry = load_registry(project / "tools.d", packs=False)
    result = export_result(registry, "openai", check=True)
    assert result.data is None
    hint = "; --check treats lossy export steps as errors"
    assert [d.format() for d in result.diagnostics] == [MESSAGE.format(level="error", more=hint)]
    assert export_result(registry, "openai").data is not None  # without --check: a warning


@pytest.mark.parametrize("command", [("validate",), ("lint",), ("export", "openai")])
def test_cli_shows_it(project: Path, command: tuple[str, ...]) -> None:
    result = run_toolctl(*command, cwd=project)
    assert "TC206 providerOptions key 'openia'" in result.stdout + result.stderr


def test_every_builtin_provider_key_is_known() -> None:
    known = set(installed()) | PROVIDER_ALIASES
    for fmt in FORMATS:
        assert set(get_exporter(fmt).provider_keys) <= known, fmt


def test_installed_formats_are_scanned_once_per_load(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Scanning every distribution's metadata takes milliseconds: not once per tool."""
    import importlib.metadata

    from toolctl.spec.providers import installed_format_names

    for i in range(5):
        (tmp_path / f"t{i}.yaml").write_text(TOOL.replace("name: t", f"name: t{i}"))
    real = importlib.metadata.entry_points
    scans: list[Any] = []

    def counting(**kw: Any) -> Any:
        scans.append(kw)
        return real(**kw)

    monkeypatch.setattr(importlib.metadata, "entry_points", counting)
    installed_format_names.cache_clear()
    registry = load_registry(tmp_path, packs=False)
    assert [d.code for d in registry.diagnostics] == ["TC206"] * 5
    assert len(scans) == 1
    result = export_result(registry, "openai")
    assert [d.code for d in result.diagnostics].count("TC206") == 5
    assert len(scans) <= 2  # at most export's own look-up of the format, not one per tool
