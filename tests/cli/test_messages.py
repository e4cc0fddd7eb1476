"""Messages that fix themselves: each error says what is wrong and what to do about it."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.cli_helpers import Capture, toolctl
from toolctl import load

TOOL = """\
toolctl: 1
name: {name}
description: Return its input for the tests of the command line's messages.
handler: mhandlers:echo
inputSchema:
  type: object
  properties:
    tags: {{type: array, items: {{type: string}}}}
"""


@pytest.fixture
def empty(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    return tmp_path


@pytest.fixture
def project(empty: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.delitem(sys.modules, "mhandlers", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    (empty / "tools.d").mkdir()
    (empty / "tools.d" / "on.yaml").write_text(TOOL.format(name="on"), "utf-8")
    (empty / "mhandlers.py").write_text("def echo(args):\n    return args\n", "utf-8")
    return empty


@pytest.mark.parametrize("argv", [["validate"], ["run", "x"], ["test"], ["list"]])
def test_an_empty_directory_points_at_toolctl_init(
    empty: Path, argv: list[str], capsys: Capture
) -> None:
    code, _, err = toolctl(capsys, *argv, "--no-packs")
    assert code in (1, 2)
    assert "tools path not found" in err and "toolctl init" in err
    final = err.split("toolctl: error: ")[-1]
    if argv[0] != "validate" and argv[0] != "list":  # the closing error names the fix too
        assert "tools.d does not exist: start a project with toolctl init" in final, err


def test_list_says_how_many_disabled_tools_it_hides(project: Path, capsys: Capture) -> None:
    off = TOOL.format(name="off") + "enabled: false\n"
    (project / "tools.d" / "off.yaml").write_text(off, "utf-8")
    code, out, err = toolctl(capsys, "list", "--no-packs")
    assert code == 0 and "off" not in out
    assert "1 disabled tool(s) not shown; toolctl list --all lists them too" in err
    code, out, err = toolctl(capsys, "list", "--all", "--no-packs")
    assert "off (disabled)" in out and "not shown" not in err


def test_validate_reports_every_error_of_a_file_at_once(project: Path, capsys: Capture) -> None:
    broken = (
        TOOL.format(name="on")
        .replace("handler:", "handelr:")
        .replace("type: string", "type: integr")
    )
    (project / "tools.d" / "on.yaml").write_text(broken, "utf-8")
    code, _, err = toolctl(capsys, "validate", "--no-packs")
    assert code == 1
    # the format error and the schema error it used to hide until it was fixed
    assert "TC201 unknown key 'handelr'" in err
    assert (
        "'integr' is not a JSON Schema type; use one of array, boolean, integer, null, number, "
        "object, string (did you mean 'integer'?)"
    ) in err


def test_a_model_reads_null_not_none(project: Path) -> None:
    result = load().call("on", {"tags": None}, store=False)
    assert result.error is not None and result.error.code == "invalid_input"
    assert [d["message"] for d in result.error.details] == ["null is not of type 'array'"]
    result = load().call("on", "[1, true, null]", store=False)
    assert result.error is not None
    assert result.error.message == "arguments must be a JSON object, not array"


def test_force_color_wins_over_a_dumb_terminal(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "tools.d" / "bad.yaml").write_text("toolctl: 1\nname: bad\n", "utf-8")
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("TERM", "dumb")
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, _, err = toolctl(capsys, "validate", "--no-packs")
    assert "\x1b[" in err  # CI systems that set TERM=dumb still show colour when asked
    monkeypatch.delenv("FORCE_COLOR")
    _, _, err = toolctl(capsys, "validate", "--no-packs")
    assert "\x1b[" not in err


def test_a_file_level_error_does_not_hide_the_schema_errors_of_its_tools(
    project: Path, capsys: Capture
) -> None:
    text = (
        "toolctl: 1\nbogus: 1\ntools:\n  - name: a\n    description: A tool for the tests of "
        "the messages.\n    inputSchema:\n      type: object\n      properties:\n"
        "        n: {type: integr}\n"
    )
    (project / "tools.d" / "many.yaml").write_text(text, "utf-8")
    code, _, err = toolctl(capsys, "validate", "--no-packs")
    assert code == 1
    assert "many.yaml:2:1: error TC201 unknown key 'bogus'" in err
    assert "many.yaml:9:19: error TC301 inputSchema is not a valid JSON Schema: 'integr'" in err
