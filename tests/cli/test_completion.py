"""Shell completion: the scripts, and tool names and run ids completed from the registry
through the completion machinery itself (the ``_TOOLCTL_COMPLETE`` protocol a shell uses)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import toolctl
from toolctl.cli.app import run

Capture = pytest.CaptureFixture[str]

TOOLS = """\
toolctl: 1
tools:
  - name: weather_now
    title: Current weather
    description: Return a fixed forecast for the tests of shell completion.
    handler: chandlers:echo
  - name: weather_week
    description: Return a fixed forecast for the tests of shell completion.
    handler: chandlers:echo
  - name: gated
    description: Return a fixed answer after a person approves the call.
    handler: chandlers:echo
    requireApproval: true
"""
HANDLERS = """\
import os
os.environ["TOOLCTL_TEST_IMPORTED"] = "yes"  # completing must never import this


def echo(args):
    return args
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delitem(sys.modules, "chandlers", raising=False)
    monkeypatch.delenv("TOOLCTL_TEST_IMPORTED", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "tools.yaml").write_text(TOOLS, "utf-8")
    (tmp_path / "chandlers.py").write_text(HANDLERS, "utf-8")
    return tmp_path


def complete(capsys: Capture, monkeypatch: pytest.MonkeyPatch, shell: str, line: str) -> list[str]:
    """What ``shell`` offers after ``line`` (the text typed so far)."""
    monkeypatch.setenv("_TOOLCTL_COMPLETE", f"complete_{shell}")
    if shell == "bash":
        words = line.split()
        cword = len(words) if line.endswith(" ") else len(words) - 1
        monkeypatch.setenv("COMP_WORDS", line)
        monkeypatch.setenv("COMP_CWORD", str(cword))
    else:
        monkeypatch.setenv("_TYPER_COMPLETE_ARGS", line)
        monkeypatch.setenv("_TYPER_COMPLETE_FISH_ACTION", "get-args")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        run([])
    assert exited.value.code == 0
    out = capsys.readouterr().out
    for var in ("_TOOLCTL_COMPLETE", "COMP_WORDS", "COMP_CWORD", "_TYPER_COMPLETE_ARGS"):
        monkeypatch.delenv(var, raising=False)
    return [line for line in out.splitlines() if line.strip()]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_the_completion_script_of_each_shell(shell: str, capsys: Capture) -> None:
    assert run(["completion", shell]) == 0
    script = capsys.readouterr().out
    assert "_TOOLCTL_COMPLETE" in script and f"complete_{shell}" in script


def test_an_unknown_shell_is_a_usage_error(capsys: Capture) -> None:
    assert run(["completion", "tcsh"]) == 2
    assert "toolctl: error: " in capsys.readouterr().err


def test_bash_completes_tool_names_without_importing_handlers(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert complete(capsys, monkeypatch, "bash", "toolctl run weather_") == [
        "weather_now",
        "weather_week",
    ]
    assert complete(capsys, monkeypatch, "bash", "toolctl test g") == ["gated"]
    assert "TOOLCTL_TEST_IMPORTED" not in __import__("os").environ
    assert "chandlers" not in sys.modules


def test_zsh_and_fish_show_titles(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    zsh = "\n".join(complete(capsys, monkeypatch, "zsh", "toolctl show weather_n"))
    assert '"weather_now":"Current weather"' in zsh
    fish = complete(capsys, monkeypatch, "fish", "toolctl show weather_n")
    assert fish == ["weather_now\tCurrent weather"]


def test_export_completes_providers_first_then_tools(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = complete(capsys, monkeypatch, "bash", "toolctl export ")
    assert "openai" in first and "anthropic" in first and "gated" in first
    assert complete(capsys, monkeypatch, "bash", "toolctl export openai ga") == ["gated"]


def test_run_ids_from_the_history(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    # no history yet: nothing offered, and completing does not create one
    assert complete(capsys, monkeypatch, "bash", "toolctl runs show ") == []
    assert not (project / ".toolctl").exists()
    registry = toolctl.load()
    done = registry.call("weather_now", {})
    pending = registry.call("gated", {})
    assert pending.status.value == "awaiting_approval"
    every = complete(capsys, monkeypatch, "bash", "toolctl runs show ")
    assert set(every) == {done.run_id, pending.run_id}
    assert complete(capsys, monkeypatch, "bash", "toolctl approve ") == [pending.run_id]
    assert complete(capsys, monkeypatch, "bash", "toolctl resume ") == []


def test_a_broken_registry_completes_nothing_quietly(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "toolctl.yaml").write_text("tools: [unclosed\n", "utf-8")
    assert complete(capsys, monkeypatch, "bash", "toolctl run w") == []
    assert capsys.readouterr().err == ""


def test_a_hostile_title_cannot_drive_the_terminal(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    hostile = TOOLS.replace("title: Current weather", 'title: "now\\e[2J\\nrm -rf ~\\a"')
    (project / "tools.d" / "tools.yaml").write_text(hostile, "utf-8")
    fish = complete(capsys, monkeypatch, "fish", "toolctl show weather_n")
    assert fish == ["weather_now\tnow [2J rm -rf ~"]  # one line, no escape or bell


def test_clicks_spelling_of_the_request_works_too(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("_TOOLCTL_COMPLETE", "bash_complete")
    monkeypatch.setenv("COMP_WORDS", "toolctl run weather_w")
    monkeypatch.setenv("COMP_CWORD", "2")
    with pytest.raises(SystemExit):
        run([])
    assert capsys.readouterr().out.split() == ["weather_week"]
    monkeypatch.setenv("_TOOLCTL_COMPLETE", "zsh_source")
    with pytest.raises(SystemExit):
        run([])
    assert "compdef" in capsys.readouterr().out


def test_only_the_command_being_completed_is_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    from toolctl.cli.app import _modules_for
    from toolctl.cli.complete import typed_words

    monkeypatch.setenv("COMP_WORDS", "toolctl run we")
    monkeypatch.setenv("COMP_CWORD", "2")
    assert typed_words() == ["run"] and _modules_for(typed_words()) == ["toolctl.cli.run"]
    monkeypatch.setenv("COMP_CWORD", "1")  # still typing the command: every one is a candidate
    assert typed_words() == [] and len(_modules_for(typed_words())) > 10
    monkeypatch.delenv("COMP_WORDS")
    monkeypatch.setenv("_TYPER_COMPLETE_ARGS", "toolctl export openai ")
    assert typed_words() == ["export", "openai"]
    monkeypatch.setenv("_TYPER_COMPLETE_ARGS", "toolctl 'unclosed")
    assert typed_words() == []
