"""Formats come from the ``toolctl.exporters`` entry-point group, built-ins included."""

from __future__ import annotations

from importlib.metadata import EntryPoint, entry_points

import pytest

from tests.export.conftest import FORMATS
from toolctl.errors import PluginError
from toolctl.export import export, export_result, formats, get_exporter, list_formats
from toolctl.registry import Registry

PLUGINS = {
    "names": "tests.export.plugin_sample:EXPORTER",
    "extras": "tests.export.plugin_sample:EXPORTER [fast]",  # legal entry-point syntax
    "crash": "tests.export.plugin_sample:CRASHING",
    "notone": "tests.export.plugin_sample:NOT_AN_EXPORTER",
    "missing": "no_such_package.exporter:EXPORTER",
}


@pytest.fixture
def plugins(monkeypatch: pytest.MonkeyPatch) -> None:
    fake = [EntryPoint(n, v, formats.GROUP) for n, v in PLUGINS.items()]
    real = list(entry_points(group=formats.GROUP))
    monkeypatch.setattr(formats, "entry_points", lambda group: [*real, *fake])


def test_builtins_are_declared_as_entry_points() -> None:
    declared = {ep.name: ep.value for ep in entry_points(group=formats.GROUP)}
    assert declared == formats.BUILTIN
    assert sorted(FORMATS) == sorted(declared)
    for name in FORMATS:
        assert get_exporter(name).name == name


def test_a_third_party_format_works_with_its_own_options(plugins: None, fixtures: Registry) -> None:
    assert export(fixtures, "names", tags=["shop"], prefix="x-") == [
        "x-create_order",
        "x-ship_parcel",
    ]


def test_broken_plugins_are_reported_not_raised(plugins: None) -> None:
    rows = {r["name"]: r for r in list_formats()}
    assert rows["names"]["description"] == "Tool names only (a sample plugin)"
    assert "ModuleNotFoundError" in rows["missing"]["error"]
    assert "is not an exporter" in rows["notone"]["error"]
    assert "error" not in rows["openai"] and "error" not in rows["extras"]
    with pytest.raises(PluginError, match=r"'missing'.*failed to load"):
        get_exporter("missing")


def test_a_crashing_plugin_becomes_a_diagnostic(plugins: None, fixtures: Registry) -> None:
    result = export_result(fixtures, "crash")
    assert result.data is None
    [diag] = result.diagnostics
    assert diag.code == "TX102" and "ZeroDivisionError: plugin bug" in diag.message


def test_exporters_never_import_the_cli_or_mcp() -> None:
    import subprocess
    import sys

    code = (
        "import sys, toolctl.export as e\n"
        "for n in e.formats.BUILTIN: e.get_exporter(n)\n"
        "bad = [m for m in ('typer', 'rich', 'mcp', 'click') if m in sys.modules]\n"
        "assert not bad, bad\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_every_export_code_is_documented() -> None:
    import re

    from tests.export.conftest import REPO

    source = "".join(p.read_text() for p in (REPO / "src/toolctl/export").glob("*.py"))
    used = set(re.findall(r'"(TX\d{3})"', source))
    documented = set(re.findall(r"^\| (TX\d{3}) \|", (REPO / "docs/export.md").read_text(), re.M))
    assert used == documented
