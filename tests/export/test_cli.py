"""``toolctl export`` as a user runs it: JSON on stdout, diagnostics on stderr, exit codes."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.export.conftest import FIXTURES, REFUSED
from toolctl.cli.app import run

FIX = str(FIXTURES)


def _run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = run(["export", *argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_export_prints_json(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Indented on a terminal, one line into a pipe (for programs), --indent either way."""
    code, out, err = _run(capsys, "openai", "-p", FIX, "--tool", "ping")
    assert (code, err) == (0, "")
    assert json.loads(out)["tools"][0]["function"]["name"] == "ping"
    assert out.startswith('{"tools": [{') and out.count("\n") == 1
    code, out, _ = _run(capsys, "openai", "-p", FIX, "--tool", "ping", "--indent", "3")
    assert out.startswith('{\n   "tools": [')
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    code, out, _ = _run(capsys, "openai", "-p", FIX, "--tool", "ping")
    assert out.startswith('{\n  "tools": [')
    code, out, _ = _run(capsys, "openai", "-p", FIX, "--tool", "ping", "--indent", "0")
    assert out.count("\n") == 1


def test_output_file_is_one_line_and_replaced_only_by_a_whole_export(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "tools.json"
    code, out, _ = _run(capsys, "mcp", "-p", FIX, "-t", "ping", "-o", str(target))
    assert (code, out) == (0, "")
    text = target.read_text()
    assert text.count("\n") == 1 and json.loads(text)["tools"][0]["name"] == "ping"
    code, out, _ = _run(capsys, "openai", "-p", str(REFUSED), "-t", "tag_items", "-o", str(target))
    assert (code, out) == (1, "")
    assert target.read_text() == text  # a refused export leaves the file as it was
    assert sorted(p.name for p in tmp_path.iterdir()) == ["tools.json"]  # no temporary left
    code, _, err = _run(capsys, "mcp", "-p", FIX, "-o", str(tmp_path / "missing" / "x.json"))
    assert code == 2 and "cannot write" in err and "Traceback" not in err


def test_indent_and_output_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    code, out, _ = _run(capsys, "mcp", "-p", FIX, "-t", "ping", "--indent", "0")
    assert code == 0 and out.count("\n") == 1
    target = tmp_path / "tools.json"
    code, out, _ = _run(capsys, "anthropic", "-p", FIX, "--tag", "docs", "-o", str(target))
    assert (code, out) == (0, "")
    assert [t["name"] for t in json.loads(target.read_text())["tools"]] == ["search_docs"]


def test_lossy_steps_warn_and_check_fails(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "anthropic", "-p", FIX, "-t", "create_order")
    assert code == 0 and json.loads(out)
    assert "warning TX302" in err and "dropped 'minimum'" in err
    code, out, err = _run(capsys, "anthropic", "-p", FIX, "-t", "create_order", "--check")
    assert (code, out) == (1, "")
    assert "error TX302" in err and "--check treats lossy export steps as errors" in err


def test_refusal_names_file_line_and_path(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "openai", "-p", str(REFUSED), "-t", "tag_items")
    assert (code, out) == (1, "")
    assert "tools.yaml:9:9: error TX311" in err
    assert "open object (additionalProperties)" in err


def test_info_notes_only_with_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    _, _, quiet = _run(
        capsys, "gemini", "-p", FIX, "-t", "ship_parcel", "--gemini-parameters", "openapi"
    )
    _, _, loud = _run(
        capsys,
        "gemini",
        "-p",
        FIX,
        "-t",
        "ship_parcel",
        "--gemini-parameters",
        "openapi",
        "-v",
    )
    assert "info" not in quiet and "info TX300" in loud and "inlined" in loud


def test_options_reach_the_exporter(capsys: pytest.CaptureFixture[str]) -> None:
    _, out, _ = _run(capsys, "mistral", "-p", FIX, "-t", "search_docs", "--examples-in-description")
    assert "Examples:" in json.loads(out)["tools"][0]["function"]["description"]
    _, out, _ = _run(capsys, "mcp", "-p", FIX, "-t", "ping", "--mcp-protocol", "2026-07-28")
    assert json.loads(out)["resultType"] == "complete"


def test_usage_errors(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "--provider", "nope", "-p", FIX)
    assert (code, out) == (2, "")
    assert "unknown export format 'nope'" in err and "openai-responses" in err
    code, _, err = _run(capsys, "-p", FIX)
    assert code == 2 and "name the provider format to export to" in err
    assert "toolctl export openai" in err  # the fix, spelled out


def test_list_formats(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = _run(capsys, "--list-formats")
    assert code == 0
    names = [line.split()[0] for line in out.splitlines()]
    assert names == [
        "anthropic",
        "bedrock",
        "gemini",
        "mcp",
        "mistral",
        "openai",
        "openai-responses",
    ]


def test_a_registry_with_errors_exports_nothing(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "bad.yaml").write_text("toolctl: 1\nname: bad\n", encoding="utf-8")
    code, out, err = _run(capsys, "openai", "-p", str(tmp_path))
    assert (code, out) == (1, "")
    assert "the registry has errors; nothing exported" in err
    assert "bad.yaml:1:1: error" in err  # the findings come first, located


def test_unknown_tool_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = _run(capsys, "openai", "-p", FIX, "-t", "pong")
    assert (code, out) == (2, "")
    assert "no tool named 'pong'" in err and "ping" in err


def test_unwritable_output_is_a_user_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "missing" / "tools.json"
    code, out, err = _run(capsys, "openai", "-p", FIX, "-o", str(target))
    assert (code, out) == (2, "")  # a bad -o is a usage error, as for every command
    assert "cannot write" in err and "Traceback" not in err


def test_broken_plugin_in_the_cli(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    from importlib.metadata import EntryPoint

    from toolctl.export import formats

    # The CLI remembers the installed formats while sys.path is unchanged, which installing
    # a real plugin changes and this stand-in does not: a cache of its own is cold.
    monkeypatch.setenv("TOOLCTL_CACHE_DIR", str(tmp_path / "cache"))
    broken = EntryPoint("broken", "no_such_package.mod:EXPORTER", formats.GROUP)
    monkeypatch.setattr(formats, "entry_points", lambda group: [broken])
    code, out, _ = _run(capsys, "--list-formats")
    assert code == 1 and "broken" in out and "BROKEN" in out and "openai" in out
    code, out, err = _run(capsys, "--provider", "broken", "-p", FIX)
    assert (code, out) == (1, "")
    assert "failed to load: ModuleNotFoundError" in err and "Traceback" not in err
