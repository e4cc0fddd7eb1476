"""One CLI grammar: positionals name tools, -r names the registry, -f is the output format,
-v/-q everywhere, --force where a command refuses to overwrite, usage errors in toolctl's style.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import Capture, toolctl

TOOL = """\
toolctl: 1
name: {name}
description: Return a fixed word for the tests of the command-line grammar.
inputSchema: {{type: object}}
handler: handlers:{name}
tests:
  - name: fixed
    input: {{}}
    output: {name}
"""
HANDLERS = "def alpha(args):\n    return 'alpha'\n\n\ndef beta(args):\n    return 'beta'\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delitem(sys.modules, "handlers", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    (tmp_path / "tools.d").mkdir()
    for name in ("alpha", "beta"):
        (tmp_path / "tools.d" / f"{name}.yaml").write_text(TOOL.format(name=name), "utf-8")
    (tmp_path / "handlers.py").write_text(HANDLERS, "utf-8")
    return tmp_path


def test_test_names_tools_positionally(project: Path, capsys: Capture) -> None:
    code, out, err = toolctl(capsys, "test", "alpha", "-f", "json", "--no-packs")
    assert code == 0, err
    assert {r["id"].split("::")[0] for r in json.loads(out)["results"]} == {"alpha"}


def test_an_unknown_tool_name_says_did_you_mean(project: Path, capsys: Capture) -> None:
    code, _, err = toolctl(capsys, "test", "alpah", "--no-packs")
    assert code == 2
    assert "no tool named 'alpah'" in err and "alpha" in err
    assert "tools path not found" not in err  # the old grammar read it as a path


def test_a_path_positional_still_names_the_registry(project: Path, capsys: Capture) -> None:
    for command in ("test", "lint", "list"):
        code, _, err = toolctl(capsys, command, "tools.d", "--no-packs")
        assert code == 0, (command, err)
    code, out, _ = toolctl(capsys, "export", "openai", str(project / "tools.d"), "--no-packs")
    assert code == 0 and len(json.loads(out)["tools"]) == 2


def test_a_directory_named_like_a_tool_does_not_hide_the_tool(
    project: Path, capsys: Capture
) -> None:
    (project / "alpha").mkdir()  # a handler package named like its tool
    (project / "alpha" / "__init__.py").write_text("", "utf-8")
    code, out, err = toolctl(capsys, "test", "alpha", "-f", "json", "--no-packs")
    assert code == 0, err
    assert {r["id"].split("::")[0] for r in json.loads(out)["results"]} == {"alpha"}


def test_list_and_lint_take_tool_names(project: Path, capsys: Capture) -> None:
    code, out, _ = toolctl(capsys, "list", "beta", "-f", "json", "--no-packs")
    assert code == 0 and [row["name"] for row in json.loads(out)] == ["beta"]
    code, out, _ = toolctl(capsys, "lint", "alpha", "-f", "json", "--no-packs")
    assert {d["tool"] for d in json.loads(out)["diagnostics"]} <= {"alpha", None}


def test_export_takes_the_provider_first_or_by_option(project: Path, capsys: Capture) -> None:
    for argv in (("openai", "alpha"), ("alpha", "--provider", "openai")):
        code, out, err = toolctl(capsys, "export", *argv, "--no-packs")
        assert (code, err) == (0, ""), argv
        assert [t["function"]["name"] for t in json.loads(out)["tools"]] == ["alpha"]


def test_export_format_provider_still_works_with_a_note(project: Path, capsys: Capture) -> None:
    code, out, err = toolctl(capsys, "export", "--format", "openai", "--no-packs")
    assert code == 0 and len(json.loads(out)["tools"]) == 2
    assert "`export --format openai` is deprecated; write `toolctl export openai`" in err
    code, _, err = toolctl(capsys, "export", "-f", "anthropic", "--provider", "openai")
    assert code == 2 and "-f/--format is the output format" in err


def test_export_without_a_provider_names_the_fix(project: Path, capsys: Capture) -> None:
    code, _, err = toolctl(capsys, "export", "alpha", "--no-packs")
    assert code == 2
    assert "'alpha' is not a provider format; the installed ones are" in err
    assert "toolctl export openai alpha" in err


def test_show_takes_format(project: Path, capsys: Capture) -> None:
    code, out, _ = toolctl(capsys, "show", "alpha", "--no-packs")
    assert code == 0 and json.loads(out)["name"] == "alpha"
    code, out, _ = toolctl(capsys, "show", "alpha", "-f", "text", "--no-packs")
    assert code == 0 and "name: alpha\n" in out and not out.startswith("{")


def test_quiet_leaves_only_errors_and_verbose_is_everywhere(project: Path, capsys: Capture) -> None:
    code, _, err = toolctl(capsys, "validate", "--no-packs")
    assert code == 0 and err.startswith("ok: 2 tool(s)")
    code, _, err = toolctl(capsys, "validate", "-q", "--no-packs")
    assert (code, err) == (0, "")
    for command in ("run", "show", "list", "lint", "validate", "init", "completion"):
        code, out, _ = toolctl(capsys, command, "--help")
        assert code == 0 and "-v, --verbose" in out and "-q, --quiet" in out, command
    code, out, _ = toolctl(capsys, "test", "-q", "--no-packs")
    assert code == 0 and out.splitlines()[-1].startswith("2 passed, 0 failed")
    assert "tool " not in out  # no per-tool table
    code, _, err = toolctl(capsys, "validate", "-v", "-q")
    assert code == 2 and "give -v/--verbose or -q/--quiet, not both" in err


def test_init_force_overwrites(tmp_path: Path, capsys: Capture) -> None:
    target = tmp_path / "p"
    assert toolctl(capsys, "init", str(target))[0] == 0
    (target / "toolctl.yaml").write_text("tools: elsewhere\n", "utf-8")
    code, _, err = toolctl(capsys, "init", str(target))
    assert code == 2 and "toolctl init --force" in err  # the refusal names the way out
    code, _, err = toolctl(capsys, "init", "--force", str(target))
    assert code == 0, err
    assert (target / "toolctl.yaml").read_text("utf-8").startswith("# toolctl project")


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["validate", "--bogus"], "no such option: --bogus"),
        (["run"], "missing argument 'TOOL'"),
        (["runs", "list", "--limit", "x"], "invalid value for '--limit'"),
        (["valdate"], "no such command 'valdate'"),
    ],
)
def test_usage_errors_in_toolctl_style(argv: list[str], says: str, capsys: Capture) -> None:
    code, _, err = toolctl(capsys, *argv)
    assert code == 2
    lines = err.splitlines()
    assert lines[0].startswith("toolctl: error: ") and says in lines[0], err
    assert lines[1].startswith("  usage: toolctl") and lines[2].startswith("  hint: toolctl")
    assert "Usage:" not in err and "Try '" not in err  # not click's own layout


def test_cli_md_shows_the_real_usage_error(capsys: Capture) -> None:
    page = (Path(__file__).resolve().parents[2] / "docs" / "cli.md").read_text("utf-8")
    shown = page.split("$ toolctl validate --bogus\n", 1)[1].split("```", 1)[0]
    code, _, err = toolctl(capsys, "validate", "--bogus")
    assert code == 2 and err == shown
