"""``toolctl CMD --help``: readable at 80 columns in a pipe, the same options everywhere."""

from __future__ import annotations

import functools
import re
from typing import Any

import pytest
import typer

from toolctl.cli import options
from toolctl.cli.app import app, reflow
from toolctl.cli.app import run as cli


def _commands(typer_app: typer.Typer, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found = [(*prefix, c.name or "") for c in typer_app.registered_commands]
    for group in typer_app.registered_groups:
        assert group.typer_instance is not None and group.name
        found.append((*prefix, group.name))
        found.extend(_commands(group.typer_instance, (*prefix, group.name)))
    return found


COMMANDS = _commands(app)
GROUPS = {("runs",)}
# schema prints the format's JSON Schema; init creates a project; completion prints a script:
# none reads a registry
NO_REGISTRY = {("schema",), ("init",), ("completion",)}
# these name a project with --registry but load no packs: `new` drafts a file into it, `worker`
# runs jobs from its run history
TAKES_A_REGISTRY = {("new",), ("worker",)}
LOADS_A_REGISTRY = {
    ("validate",),
    ("list",),
    ("show",),
    ("run",),
    ("approve",),
    ("decline",),
    ("resume",),
    ("export",),
    ("lint",),
    ("test",),
    ("serve",),
    ("lock",),
    ("diff",),
    ("search",),
}


@functools.cache
def _root() -> Any:
    return typer.main.get_command(app)


def _click_command(command: tuple[str, ...]) -> Any:
    """The click command behind ``toolctl COMMAND`` (typer vendors click: matched by shape)."""
    cmd: Any = _root()
    for part in command:
        cmd = cmd.commands[part]
    return cmd


def _options(command: tuple[str, ...]) -> list[Any]:
    return [
        p for p in _click_command(command).params if p.param_type_name == "option" and not p.hidden
    ]


def _help(
    command: tuple[str, ...], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> str:
    monkeypatch.setenv("COLUMNS", "80")
    capsys.readouterr()
    assert cli([*command, "--help"]) == 0  # captured: stdout is a pipe, not a terminal
    return capsys.readouterr().out


def test_every_command_is_covered() -> None:
    assert {"validate", "run", "runs", "test", "lint", "export"} <= {c[0] for c in COMMANDS}
    assert ("runs", "wait") in COMMANDS
    leaves = set(COMMANDS) - GROUPS
    unclassified = leaves - NO_REGISTRY - LOADS_A_REGISTRY - TAKES_A_REGISTRY
    assert unclassified <= {c for c in leaves if c[0] == "runs"}


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_fits_80_columns_and_names_every_option_uncut(
    command: tuple[str, ...], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _help(command, capsys, monkeypatch)
    assert "…" not in text and "╭" not in text and "\x1b[" not in text
    assert max(len(line) for line in text.splitlines()) <= 80, text
    for name in (n for p in _options(command) for n in (*p.opts, *p.secondary_opts)):
        assert re.search(rf"(^|[\s,/]){re.escape(name)}([\s,]|$)", text, re.M), (
            f"toolctl {' '.join(command)} --help does not show {name} whole:\n{text}"
        )
    if command not in GROUPS | NO_REGISTRY:
        assert re.search(r"^\s+-r, --registry PATH\s", text, re.M), text


@pytest.mark.parametrize("command", sorted(LOADS_A_REGISTRY), ids=" ".join)
def test_every_command_that_loads_a_registry_takes_packs(command: tuple[str, ...]) -> None:
    names = {o for p in _click_command(command).params for o in (*p.opts, *p.secondary_opts)}
    assert {"--registry", "-r", "--packs", "--no-packs"} <= names


def test_a_short_flag_means_one_option_everywhere() -> None:
    meaning: dict[str, set[str]] = {}
    for command in set(COMMANDS) - GROUPS:
        for param in _options(command):
            longs = [o for o in param.opts if o.startswith("--")]
            for short in (o for o in param.opts if not o.startswith("--")):
                meaning.setdefault(short, set()).add(longs[0] if longs else short)
    assert {s: m for s, m in meaning.items() if len(m) > 1} == {}
    assert meaning["-r"] == {"--registry"} and meaning["-t"] == {"--tool"}
    assert meaning["-f"] == {"--format"}


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_option_says_its_unit_or_values(command: tuple[str, ...]) -> None:
    for param in _options(command):
        if not param.is_flag and param.opts != ["-h", "--help"]:
            assert param.metavar, f"toolctl {' '.join(command)} {param.opts[0]} has no metavar"


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_every_argument_has_an_upper_case_placeholder(command: tuple[str, ...]) -> None:
    """As docs/cli.md writes them: ``toolctl init [DIR]``, ``toolctl show NAME``."""
    for param in _click_command(command).params:
        if param.param_type_name == "argument":
            assert param.metavar and param.metavar.isupper(), (command, param.name)


def test_runs_list_status_names_every_run_status() -> None:
    from toolctl.cli.runs import STATUSES
    from toolctl.runtime.result import RunStatus

    assert STATUSES.split(", ") == [s.value for s in RunStatus]


def test_required_arguments_and_options_are_marked(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "[required]" in _help(("run",), capsys, monkeypatch)
    assert "[PROVIDER] [TOOL]" in _help(("export",), capsys, monkeypatch)


def test_description_keeps_every_word_in_order(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    text = _help(("lint",), capsys, monkeypatch)
    words = " ".join(text.split())
    assert "Check whether tools are good, not just valid: descriptions, schemas, provider" in words


def test_the_deprecated_path_alias_still_works_but_is_hidden(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert "--path" not in _help(("export",), capsys, monkeypatch)
    names = {o for p in _click_command(("export",)).params for o in p.opts}
    assert {"--path", "-p"} <= names
    assert options.registry_path(None, None) is None


def test_reflow_keeps_lists_and_click_verbatim_blocks() -> None:
    doc = """First line
    continues here.

    Exit codes:
      0 ok
      1 failed
    - an item
    - another

    \b
    kept
    as is
    """
    assert reflow(doc) == (
        "First line continues here.\n\nExit codes:\n  0 ok\n  1 failed\n- an item\n- another"
        "\n\n\b\nkept\nas is"
    )


def test_a_shared_option_is_one_declaration_everywhere() -> None:
    # --verbose, --quiet and --locked mean one thing in every command; --format takes one of
    # two sets of values, declared once (export's only output format is json).
    seen: dict[str, dict[tuple[str, ...], Any]] = {"--verbose": {}, "--quiet": {}, "--locked": {}}
    formats: set[Any] = set()
    for command in set(COMMANDS) - GROUPS:
        for param in _options(command):
            if param.opts[0] in seen:
                seen[param.opts[0]][command] = (tuple(param.opts), param.help)
            if "--format" in param.opts and command != ("export",):
                formats.add(param.type_descriptor.annotation)
    assert set(seen["--verbose"]) == set(seen["--quiet"]) == set(COMMANDS) - GROUPS
    assert set(seen["--locked"]) >= {("export",), ("serve",)}
    for declarations in seen.values():
        assert len(set(declarations.values())) == 1, declarations
    assert formats == {options.OutputFormat, options.ReportFormat}
