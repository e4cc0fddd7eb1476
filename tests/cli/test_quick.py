"""The quick path (``cli/quick.py``): a plain ``lint``, ``export``, ``search`` or ``validate``
parsed without Typer means what Typer would make of it, prints the same, and leaves every other
command line to Typer."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import typer

from tests.cli_helpers import toolctl
from toolctl.cli import app, quick

Capture = pytest.CaptureFixture[str]
TOOLS = {
    "get_weather": """toolctl: 1
name: get_weather
description: Get the current weather for a city.
inputSchema:
  type: object
  properties:
    city: {type: string, format: city, description: "City name: Paris, Lima."}
    days: {type: integer, default: -1, minimum: 0, exclusiveMinimum: 0}
  required: [city]
inputExamples:
  - input: {city: Paris}
""",
    "delete_file": """toolctl: 1
name: delete_file
description: Delete a file.
inputSchema:
  type: object
  properties:
    path: {type: string}
mcp:
  annotations: {destructiveHint: true}
""",
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Two small tools with findings of each severity (kept small: each case lints twice)."""
    (tmp_path / "tools.d").mkdir()
    for name, text in TOOLS.items():
        (tmp_path / "tools.d" / f"{name}.yaml").write_text(text, encoding="utf-8")
    (tmp_path / "toolctl.yaml").write_text("tools: tools.d\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _typer_params(command: str) -> list[Any]:
    group = typer.main.get_command(app.app)
    return list(group.commands[command].params)  # type: ignore[attr-defined]


def _typer_options(command: str) -> dict[str, tuple[str, bool]]:
    """Flag -> (parameter, is a flag) as Typer declares ``command``'s options."""
    found: dict[str, tuple[str, bool]] = {}
    for param in _typer_params(command):
        if param.param_type_name == "option":
            for flag in [*param.opts, *param.secondary_opts]:
                found[flag] = (param.name, bool(getattr(param, "is_flag", False)))
    return found


@pytest.mark.parametrize("command", sorted(quick.COMMANDS))
def test_each_quick_option_is_the_commands_own(command: str) -> None:
    declared = _typer_options(command)
    for flag, (name, kind, _) in quick.COMMANDS[command].items():
        assert flag in declared, f"{command} {flag}: Typer declares no such option"
        assert declared[flag] == (name, kind in (quick.FLAG, quick.OFF)), f"{command} {flag}"


@pytest.mark.parametrize("command", sorted(quick.COMMANDS))
def test_positionals_are_the_commands_own(command: str) -> None:
    arguments = [p for p in _typer_params(command) if p.param_type_name == "argument"]
    assert [(p.name, None if p.nargs == -1 else p.nargs) for p in arguments] == [
        quick.POSITIONAL[command]
    ]


def test_a_plain_command_line_is_parsed_as_typer_would() -> None:
    argv = ["--no-cache", "lint", "a", "-r", "proj", "-t", "b", "--tool", "c", "--no-packs"]
    argv += ["--fail-on", "warning", "-f", "json", "-q", "d"]
    assert quick.parse(argv) == (
        "lint",
        True,
        {
            "targets": ["a", "d"],
            "registry": Path("proj"),
            "tool": ["b", "c"],
            "packs": False,
            "fail_on": "warning",
            "fmt": "json",
            "quiet": True,
        },
    )
    argv = ["export", "openai", "--indent", "0", "-o", "out.json", "--tag", "x", "--check"]
    assert quick.parse(argv) == (
        "export",
        False,
        {
            "targets": ["openai"],
            "indent": 0,
            "output": Path("out.json"),
            "tag": ["x"],
            "check": True,
        },
    )
    argv = ["search", "-k", "3", "--no-packs", "send an email", "-f", "json", "-r", "p"]
    assert quick.parse([*argv, "--queries", "q.jsonl"]) == (
        "search",
        False,
        {
            "k": 3,
            "packs": False,
            "query": "send an email",
            "fmt": "json",
            "registry": Path("p"),
            "queries": Path("q.jsonl"),
        },
    )


@pytest.mark.parametrize(
    "argv",
    [
        ["schema"],
        ["validate", "-f", "sarif"],  # lint's formats are not validate's
        ["validate", "-t", "a"],  # no --tool: Typer's message
        ["lint", "--help"],
        ["lint", "-h"],
        ["lint", "--format=json"],  # one token: Typer's grammar
        ["lint", "-f", "markdown"],  # only with --list-rules: Typer's message
        ["lint", "--fail-on", "WARNING"],  # Typer's case rules
        ["lint", "--list-rules"],
        ["lint", "-vq"],
        ["lint", "-v", "-q"],  # not both: Typer's message
        ["lint", "-r"],  # no value
        ["lint", "--select", "--ignore"],  # an option where a value should be
        ["lint", "--select", "TL1", "--select", "TL2"],
        ["lint", "--", "x"],
        ["export", "openai", "--indent", "-1"],
        ["export", "openai", "--indent", "two"],
        ["export", "openai", "-o", "-"],
        ["export", "openai", "-r", "./proj"],  # a Path would not keep the text as written
        ["export", "--list-formats"],
        ["export", "openai", "--budget"],
        ["search", "send", "email"],  # one query: Typer's extra-argument message
        ["search", "-k", "0"],  # out of range: Typer's message
        ["search", "-k", "1001"],
        ["search", "x", "-f", "sarif"],  # lint's formats are not search's
        ["search", "x", "-t", "a"],  # no --tool: Typer's message
        ["search", "--queries", "-"],
        ["search", "-5 degrees"],  # reads as an option: Typer's grammar
    ],
    ids=" ".join,
)
def test_anything_else_is_left_to_typer(argv: list[str]) -> None:
    assert quick.parse(argv) is None


def test_completion_is_left_to_typer(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("_TOOLCTL_COMPLETE", "complete_bash")
    assert quick.parse(["lint"]) is None


def _typer_only(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(argv: list[str]) -> Any:
        return None

    monkeypatch.setattr(quick, "parse", never)


@pytest.mark.parametrize(
    "argv",
    [
        ["lint"],
        ["lint", "-f", "json", "--fail-on", "info", "--provider", "openai,gemini"],
        ["lint", "-f", "github", "-q", "--select", "TL1", "--ignore", "TL104"],
        ["lint", "no_such_tool"],  # an error through the one boundary
        ["lint", "--provider", "nope"],  # a usage error: exit 2
        ["export", "-f", "gemini", "-v", "--indent", "0", "--check"],  # the deprecated note
        ["export", "nope"],
        ["search", "weather in Paris", "-k", "1"],
        ["search", "delete a file", "-f", "json", "--no-packs"],
        ["search", "--queries", "q.jsonl", "-v"],  # headings; "hi!" abstains: a note
        ["search", "  "],  # a usage error: exit 2
        ["search"],
        ["validate"],
        ["--no-cache", "validate", "-f", "json", "-r", "."],
        ["validate", "tools.d/get_weather.yaml", "tools.d/delete_file.yaml", "--no-packs", "-q"],
        ["validate", "nope"],  # a tools path not found: exit 1, located
    ],
    ids=" ".join,
)
def test_both_paths_print_the_same(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch, argv: list[str]
) -> None:
    assert quick.parse(argv) is not None
    lines = ["weather in Paris", "hi!", "\x1b[2Jremove a file"]  # a heading is shown escaped
    (project / "q.jsonl").write_text("".join(json.dumps({"query": q}) + "\n" for q in lines))
    quick_run = toolctl(capsys, *argv)
    assert "\x1b" not in quick_run[1] + quick_run[2]
    with monkeypatch.context() as patched:
        _typer_only(patched)
        typer_run = toolctl(capsys, *argv)
    assert quick_run == typer_run


def test_an_export_to_a_file_is_the_same(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert toolctl(capsys, "export", "mcp", "-o", "quick.json")[0] == 0
    _typer_only(monkeypatch)
    assert toolctl(capsys, "export", "mcp", "-o", "typer.json")[0] == 0
    assert (project / "quick.json").read_bytes() == (project / "typer.json").read_bytes()


def test_the_quick_path_restores_the_load_settings(project: Path, capsys: Capture) -> None:
    from toolctl.cache import DEFAULTS

    before = (DEFAULTS.cache, DEFAULTS.freeze)
    toolctl(capsys, "--no-cache", "lint", "-q")
    assert (DEFAULTS.cache, DEFAULTS.freeze) == before
