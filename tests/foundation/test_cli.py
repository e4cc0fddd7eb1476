"""CLI wiring: exit codes, `--format json` shapes, list/show/schema, colour rules."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolctl.cli.app import run

from .conftest import REPO, run_toolctl, write

FIXTURES = REPO / "tests" / "fixtures" / "tools.d"
FULL = FIXTURES / "valid" / "full"
ANSI = re.compile(r"\x1b\[[0-9;]*m")

BROKEN = {
    "toolctl.yaml": "tools: tools.d\n",
    "tools.d/a.yaml": "toolctl: 1\nname: a\ndescription: d\nhandelr: x:y\n",
    "tools.d/b.yaml": "toolctl: 1\nname: b\ndescription: Fine.\n",
}


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = run(args)
    out, err = capsys.readouterr()
    return code, out, err


# exit codes ---------------------------------------------------------------------------------


def test_clean_registry_exits_0(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(FULL)
    code, out, err = _run(["validate", "--no-packs"], capsys)
    assert (code, out) == (0, "")
    assert err == "ok: 1 tool(s) in tools.d\n"


def test_findings_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(write(tmp_path, BROKEN))
    code, _out, err = _run(["validate", "--no-packs"], capsys)
    assert code == 1
    assert err.splitlines() == [
        "tools.d/a.yaml:4:1: error TC201 unknown key 'handelr' (hint: did you mean 'handler'?)",
        "1 error(s), 0 warning(s) in 1 tool(s) in tools.d (1 file(s) that failed to load)",
    ]


@pytest.mark.parametrize(
    "args",
    [["validate", "--format", "xml"], ["validate", "--bogus"], ["bogus"], ["show"]],
    ids=" ".join,
)
def test_usage_errors_exit_2(args: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _run(args, capsys)
    assert code == 2
    # toolctl's own style, as for every other error: message, usage line, where to read more
    assert err.startswith("toolctl: error: ")
    assert "\n  usage: toolctl" in err and "--help lists every argument and option" in err
    assert "Traceback" not in err


def test_usage_error_in_a_fresh_process_exits_2_without_traceback() -> None:
    result = run_toolctl("validate", "--format", "xml")
    assert result.returncode == 2
    assert "'xml' is not one of" in result.stderr
    assert "Traceback" not in result.stderr


def test_unknown_tool_is_a_clear_error(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(FULL)
    code, _out, err = _run(["show", "lookup.usr"], capsys)
    assert code == 2  # a usage error, as for `toolctl run` and `toolctl export --tool`
    assert err.splitlines() == [
        "toolctl: error: no tool named 'lookup.usr'",
        "  hint: did you mean lookup.user?",
    ]


def test_bad_config_is_a_clear_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(write(tmp_path, {"toolctl.yaml": "tols: tools.d\n"}))
    code, _out, err = _run(["validate"], capsys)
    assert code == 1
    assert "unknown setting(s) tols" in err
    assert "Traceback" not in err


def test_missing_path_is_a_located_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _out, err = _run(["validate", "--no-packs", "nope"], capsys)
    assert code == 1
    assert err.startswith("nope: error TC110 tools path not found")


# --format json ------------------------------------------------------------------------------


def test_validate_json_structure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(write(tmp_path, BROKEN))
    code, out, err = _run(["validate", "--no-packs", "--format", "json"], capsys)
    assert code == 1
    assert err == ""
    report = json.loads(out)
    assert report == {
        "status": "fail",
        "tools": ["b"],
        "diagnostics": [
            {
                "severity": "error",
                "code": "TC201",
                "message": "unknown key 'handelr'",
                "file": "tools.d/a.yaml",
                "line": 4,
                "col": 1,
                "pointer": "/handelr",
                "hint": "did you mean 'handler'?",
                "tool": None,
            }
        ],
    }


def test_validate_json_pointer_escapes_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A key with ``/`` or ``~`` is escaped in the pointer (RFC 6901), not split in two."""
    files = {
        "toolctl.yaml": "tools: tools.d\n",
        "tools.d/a.yaml": "toolctl: 1\nname: a\ndescription: d\n'x/y~z': 1\n",
    }
    monkeypatch.chdir(write(tmp_path, files))
    code, out, _ = _run(["validate", "--no-packs", "--format", "json"], capsys)
    assert code == 1
    [diag] = json.loads(out)["diagnostics"]
    assert (diag["code"], diag["pointer"]) == ("TC201", "/x~1y~0z")


def test_validate_json_clean(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(FULL)
    code, out, _ = _run(["validate", "--no-packs", "-f", "json"], capsys)
    assert code == 0
    assert json.loads(out) == {"status": "ok", "tools": ["lookup.user"], "diagnostics": []}


def test_list_json(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.chdir(FULL)
    code, out, err = _run(["list", "--format", "json"], capsys)
    assert (code, err) == (0, "")
    [row] = json.loads(out)
    assert row == {
        "name": "lookup.user",
        "title": "Look up a user",
        "annotations": {
            "title": "Look up a user",
            "readOnlyHint": True,
            "destructiveHint": False,
            "idempotentHint": True,
            "openWorldHint": False,
        },
        "requireApproval": False,
        "background": False,
        "handler": "fixture_full_handlers:echo",
        "tags": ["users", "read-only"],
        "toolset": None,
        "loading": "eager",
        "enabled": True,
        "origin": {"kind": "file", "name": "", "file": "tools.d/lookup.yaml"},
        "location": "tools.d/lookup.yaml:3:7",
    }


def test_list_text_table(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(FULL)
    code, out, _ = _run(["list"], capsys)
    assert code == 0
    header = next(line for line in out.splitlines() if "name" in line)
    for column in ("name", "title", "annotations", "approval", "handler", "tags", "origin"):
        assert column in header
    row = next(line for line in out.splitlines() if "lookup.user" in line)
    for cell in ("Look up a user", "read-only, idempotent", "fixture_full_handlers:echo"):
        assert cell in row
    assert not ANSI.search(out)


def test_show_prints_the_resolved_declaration(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(FIXTURES / "valid" / "shared_schema_ref")
    code, out, _ = _run(["show", "get_item"], capsys)
    assert code == 0
    shown = json.loads(out)
    assert "toolctl" not in shown
    props = shown["inputSchema"]["properties"]
    assert props["id"] == {"$ref": "#/$defs/common_schema__Id"}
    assert shown["inputSchema"]["$defs"]["common_schema__Id"]["pattern"] == "^[a-z]+-[0-9]+$"
    meta = shown["x-toolctl"]
    assert meta["origin"] == "tools.d/get.yaml"
    assert meta["location"] == "tools.d/get.yaml:2:7"
    assert re.fullmatch(r"[0-9a-f]{64}", meta["digest"])


# schema -------------------------------------------------------------------------------------


def test_published_schema_is_exactly_toolctl_schema() -> None:
    result = run_toolctl("schema")
    assert result.returncode == 0
    published = (REPO / "schema" / "tool.v1.schema.json").read_bytes()
    assert result.stdout.encode("utf-8") == published


def test_schema_output_option(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "tool.schema.json"
    code, _out, err = _run(["schema", "-o", str(target)], capsys)
    assert code == 0
    assert target.read_bytes() == (REPO / "schema" / "tool.v1.schema.json").read_bytes()
    assert err == f"wrote {target}\n"


def test_published_schema_is_the_one_the_loader_enforces() -> None:
    from toolctl.spec import format_schema

    published = json.loads((REPO / "schema" / "tool.v1.schema.json").read_text("utf-8"))
    assert published == format_schema()


# colour -------------------------------------------------------------------------------------


def test_no_color_wins_over_force_color(tmp_path: Path) -> None:
    write(tmp_path, BROKEN)
    result = run_toolctl("validate", "--no-packs", cwd=tmp_path, env={"FORCE_COLOR": "1"})
    assert result.returncode == 1
    assert not ANSI.search(result.stderr)
    assert result.stderr.startswith("tools.d/a.yaml:4:1: error TC201 unknown key 'handelr'")


class _Stream:
    def __init__(self, tty: bool) -> None:
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty

    def write(self, text: str) -> int:
        return len(text)

    def flush(self) -> None:
        pass


@pytest.mark.parametrize(
    ("tty", "env", "boxed"),
    [
        (True, {"NO_COLOR": "1"}, True),  # no colour, but still a terminal: box lines
        (False, {"FORCE_COLOR": "1"}, False),  # coloured CI log, still a pipe: plain columns
        (True, {}, True),
        (False, {}, False),
    ],
)
def test_table_layout_follows_the_terminal_not_the_colour_switches(
    monkeypatch: pytest.MonkeyPatch, tty: bool, env: dict[str, str], boxed: bool
) -> None:
    from toolctl.cli import render

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr("sys.stdout", _Stream(tty))
    assert (render.table("a").box is not None) is boxed
    con = render.console()
    assert con.soft_wrap is (not tty)
    assert (con.no_color or con.color_system is None) is (render._use_color(_Stream(tty)) is False)


def test_forced_colour_keeps_one_diagnostic_per_line(tmp_path: Path) -> None:
    write(tmp_path, BROKEN)
    env = {"FORCE_COLOR": "1", "NO_COLOR": "", "COLUMNS": "40"}
    result = run_toolctl("validate", "--no-packs", cwd=tmp_path, env=env)
    assert ANSI.search(result.stderr)
    plain = ANSI.sub("", result.stderr).splitlines()
    assert plain[0] == (
        "tools.d/a.yaml:4:1: error TC201 unknown key 'handelr' (hint: did you mean 'handler'?)"
    )
