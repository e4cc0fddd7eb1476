"""``toolctl CMD --help``: descriptions are reflowed, never broken inside a sentence."""

from __future__ import annotations

import itertools
import re

import pytest
import typer

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


def _description(help_text: str) -> list[str]:
    """The lines between the usage line and the first panel."""
    lines = help_text.splitlines()
    start = next(i for i, line in enumerate(lines) if "Usage:" in line) + 1
    end = next((i for i, line in enumerate(lines) if line.lstrip().startswith("╭")), len(lines))
    return [line.strip() for line in lines[start:end]]


def test_every_command_is_covered() -> None:
    assert {"validate", "run", "runs", "test", "lint", "export"} <= {c[0] for c in COMMANDS}
    assert ("runs", "wait") in COMMANDS


@pytest.mark.parametrize("command", COMMANDS, ids=" ".join)
def test_help_has_no_line_break_inside_a_sentence(
    command: tuple[str, ...], capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "400")  # wide enough that nothing wraps
    assert cli([*command, "--help"]) == 0
    described = _description(capsys.readouterr().out)
    assert any(described), f"toolctl {' '.join(command)} --help has no description"
    for line, following in itertools.pairwise(described):
        if line and following:
            assert re.search(r"[.:!?)]$", line), (
                f"toolctl {' '.join(command)} --help breaks a sentence: {line!r} / {following!r}"
            )


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
