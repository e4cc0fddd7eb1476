"""One command line: naming the registry, errors that say what is wrong, project discovery."""

from __future__ import annotations

import importlib.metadata
import json
import sys
from pathlib import Path

import pytest

from tests.cli_helpers import Capture, toolctl
from toolctl import DISTRIBUTION

REPO = Path(__file__).resolve().parents[2]

GOOD = """\
toolctl: 1
name: {name}
description: Return a fixed number for the tests of the command line.
inputSchema: {{type: object}}
handler: handlers:{name}
"""
HANDLERS = "def gamma(args):\n    return 2\n\n\ndef alpha(args):\n    return 1\n"
DISABLED = GOOD.format(name="alpha") + "enabled: false\ntests:\n  - name: one\n    input: {}\n"
BROKEN = "toolctl: 1\nname: beta\ndescription: [unclosed\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project without toolctl.yaml: tools.d/ and handlers.py beside it."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.delitem(sys.modules, "handlers", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))  # runs add the project's pythonPath
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "gamma.yaml").write_text(GOOD.format(name="gamma"), "utf-8")
    (tmp_path / "handlers.py").write_text(HANDLERS, "utf-8")
    return tmp_path


def _broken(project: Path) -> None:
    (project / "tools.d" / "beta.yaml").write_text(BROKEN, "utf-8")


# ---------------------------------------------------------------- naming the registry


def test_export_takes_the_registry_positionally_by_option_and_by_its_old_name(
    project: Path, capsys: Capture, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    tools = str(project / "tools.d")
    for args in (
        [tools],
        ["--registry", tools],
        ["-r", str(project)],  # a project root
        ["--path", tools],  # the deprecated alias keeps old scripts working
        ["-p", tools],
    ):
        code, out, err = toolctl(capsys, "export", "openai", *args, "--no-packs")
        assert (code, err) == (0, ""), args
        assert json.loads(out)["tools"][0]["function"]["name"] == "gamma"
    code, _, err = toolctl(capsys, "export", "openai", "-r", tools, "--path", tools)
    assert code == 2 and "not both" in err
    assert str(elsewhere)  # the registry was named explicitly, never found from the cwd


def test_every_registry_command_accepts_a_project_root(project: Path, capsys: Capture) -> None:
    root = str(project)
    assert toolctl(capsys, "validate", "-r", root)[0] == 0
    assert toolctl(capsys, "lint", root, "--no-packs")[0] == 0
    code, out, _ = toolctl(capsys, "list", "-r", root, "--format", "json", "--no-packs")
    assert code == 0 and [t["name"] for t in json.loads(out)] == ["gamma"]
    assert toolctl(capsys, "show", "gamma", "-r", root)[0] == 0
    assert toolctl(capsys, "run", "gamma", "-r", root, "--no-packs")[:2] == (0, "2\n")
    assert toolctl(capsys, "test", "-r", root, "--no-packs")[0] == 0


# ---------------------------------------------------------------- errors


def test_running_a_tool_whose_file_failed_shows_that_files_errors(
    project: Path, capsys: Capture
) -> None:
    _broken(project)
    code, _, err = toolctl(capsys, "run", "beta")
    assert code == 2
    assert "tools.d/beta.yaml:4:1: error TC101" in err
    assert "tool 'beta' has errors (above) and cannot run" in err
    assert "no tool named" not in err


def test_an_unknown_tool_beside_a_broken_file_points_at_the_file(
    project: Path, capsys: Capture
) -> None:
    (project / "tools.d" / "beta.yaml").write_text("toolctl: 1\n[oops\n", "utf-8")
    code, _, err = toolctl(capsys, "run", "delta")
    assert code == 2
    assert "tools.d/beta.yaml:" in err
    assert "no tool named 'delta'; 1 file(s) failed to load (above)" in err


def test_list_exits_1_on_a_broken_registry_and_still_lists(project: Path, capsys: Capture) -> None:
    _broken(project)
    code, out, err = toolctl(capsys, "list", "--no-packs")
    assert code == 1
    assert "gamma" in out and "tools.d/beta.yaml:4:1: error TC101" in err
    assert toolctl(capsys, "list", "--format", "json", "--no-packs")[0] == 1


def test_a_disabled_tool_is_named_at_its_enabled_line_without_a_class_name(
    project: Path, capsys: Capture
) -> None:
    (project / "tools.d" / "alpha.yaml").write_text(DISABLED, "utf-8")
    for argv, action in ((["run", "alpha"], "run"), (["test", "-t", "alpha"], "test")):
        code, _, err = toolctl(capsys, *argv)
        assert code == 2, argv
        assert err.splitlines() == [
            "toolctl: error: tool 'alpha' is disabled (enabled: false at tools.d/alpha.yaml:6:1)",
            f"  hint: set enabled: true to {action} it",
        ]
    code, out, _ = toolctl(capsys, "show", "alpha")  # looking at it is fine
    assert code == 0 and json.loads(out)["enabled"] is False


def test_a_disabled_tool_in_a_test_run_reports_no_exception_class(project: Path) -> None:
    import toolctl
    from toolctl.testing import TestOptions, run_tests

    (project / "tools.d" / "alpha.yaml").write_text(DISABLED, "utf-8")
    registry = toolctl.load(packs=False)
    report = run_tests(registry, TestOptions(tools=["alpha"]))
    assert [r.message for r in report.results] == [
        "tool 'alpha' is disabled (enabled: false at tools.d/alpha.yaml:6:1) "
        "(set enabled: true to run it)"
    ]


def test_summary_lines_count_the_tools_that_failed(project: Path, capsys: Capture) -> None:
    _broken(project)
    (project / "tools.d" / "bad_ref.yaml").write_text(GOOD.format(name="nowhere"), "utf-8")
    code, _, err = toolctl(capsys, "validate")
    assert code == 1
    assert err.splitlines()[-1] == (
        "2 error(s), 0 warning(s) in 2 tool(s) in tools.d "
        "(1 with errors, 1 file(s) that failed to load)"
    )
    code, _, err = toolctl(capsys, "lint", "--no-packs", "--select", "TL101")
    assert "in 2 tool(s) in tools.d (1 with errors, 1 file(s) that failed to load)" in err


@pytest.mark.parametrize(
    ("name", "text", "where"),
    [
        ("toolctl.yaml", "tools: tools.d\nstat: x\n", "toolctl.yaml:2:1"),
        ("pyproject.toml", '[tool.toolctl]\ntools = "tools.d"\nstat = "x"\n', "pyproject.toml:3:1"),
    ],
)
def test_a_config_key_typo_is_located_with_a_suggestion(
    project: Path, capsys: Capture, name: str, text: str, where: str
) -> None:
    (project / name).write_text(text, "utf-8")
    code, _, err = toolctl(capsys, "validate")
    assert code == 1
    assert err.splitlines()[:2] == [
        f"toolctl: error: {where}: unknown setting(s) stat",
        "  hint: did you mean 'state'? known settings: export, limits, lint, pythonPath, run, "
        "schemas, serve, state, test, tools, toolsets",
    ]


@pytest.mark.parametrize(
    ("name", "text", "error"),
    [
        ("toolctl.yaml", "- tools.d\n", "toolctl.yaml:1:1: the configuration must be a mapping"),
        ("toolctl.yaml", "x-a: 1\ntools: 5\n", "toolctl.yaml:2:1: 'tools' must be a path"),
        ("toolctl.yaml", "pythonPath: {a: 1}\n", "toolctl.yaml:1:1: 'pythonPath' must be a path"),
        ("toolctl.yaml", "tools: tools.d\nstate: 5\n", "toolctl.yaml:2:1: 'state' must be a path"),
        ("pyproject.toml", "[tool.toolctl]\ntools = 5\n", "pyproject.toml:2:1: 'tools' must be"),
    ],
)
def test_a_config_value_of_the_wrong_kind_is_located_with_a_hint(
    project: Path, capsys: Capture, name: str, text: str, error: str
) -> None:
    (project / name).write_text(text, "utf-8")
    code, _, err = toolctl(capsys, "validate")
    assert code == 1
    first, second = err.splitlines()[:2]
    assert first.startswith(f"toolctl: error: {error}")
    assert second.startswith("  hint: ")


def test_lint_explain_renders_restructuredtext_for_a_pipe(capsys: Capture) -> None:
    code, out, _ = toolctl(capsys, "lint", "--explain", "TL803")
    assert code == 0
    assert "`" not in out and ":class:" not in out
    assert "cannot be called as fn(input) or fn(input, ctx)." in out
    assert max(len(line) for line in out.splitlines()) <= 80


# ---------------------------------------------------------------- the project root


def test_validate_and_run_a_tools_directory_without_config(
    project: Path,
    capsys: Capture,
    monkeypatch: pytest.MonkeyPatch,
    tmp_path_factory: pytest.TempPathFactory,
) -> None:
    tools = str(project / "tools.d")
    assert toolctl(capsys, "validate", tools)[0] == 0  # handlers.py beside tools.d resolves
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))  # from another directory too
    assert toolctl(capsys, "validate", tools)[0] == 0
    assert toolctl(capsys, "validate", str(project / "tools.d" / "gamma.yaml"))[0] == 0
    assert toolctl(capsys, "run", "gamma", "-r", tools, "--no-packs")[:2] == (0, "2\n")
    assert (project / ".toolctl" / "state.db").exists()
    assert not (project / "tools.d" / ".toolctl").exists()


def test_tc402_says_where_handlers_were_looked_up(project: Path, capsys: Capture) -> None:
    (project / "handlers.py").unlink()
    code, _, err = toolctl(capsys, "validate")
    assert code == 1
    assert "error TC402 'handlers:gamma' does not resolve" in err
    assert f"handler modules are looked up in {project.resolve()} (pythonPath" in err


# ---------------------------------------------------------------- the distribution


def test_install_hints_name_this_projects_distribution() -> None:
    from toolctl.server import INSTALL_HINT

    assert importlib.metadata.distribution(DISTRIBUTION).metadata["Name"] == DISTRIBUTION
    assert DISTRIBUTION != "toolctl"  # that name on the index is an unrelated project
    assert f"pip install '{DISTRIBUTION}[mcp]'" in INSTALL_HINT
    assert "pip install '.[mcp]'" in INSTALL_HINT
    pyproject = (REPO / "pyproject.toml").read_text("utf-8")
    assert f'name = "{DISTRIBUTION}"' in pyproject
    assert f'dev = ["{DISTRIBUTION}[test,mcp]"]' in pyproject
    readme = (REPO / "README.md").read_text("utf-8")
    assert "pip install 'toolctl[" not in readme and "pip install toolctl" not in readme


def test_a_crash_in_a_built_in_exporter_is_toolctls_not_a_plugins(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # the built-in formats are declared by this distribution's entry points, whatever its name
    from toolctl.export import export_result
    from toolctl.export.formats import installed
    from toolctl.export.openai import EXPORTER

    assert installed()["openai"].package == DISTRIBUTION

    def crash(*args: object) -> None:
        raise RuntimeError("a bug in toolctl")

    monkeypatch.setattr(EXPORTER, "export", crash)
    with pytest.raises(RuntimeError, match="a bug in toolctl"):  # reaches the bug report path
        export_result([], "openai")


def test_a_project_root_given_explicitly_is_kept_without_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # what a background worker does with the root and tool paths its run recorded
    from toolctl.config import project_at

    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))
    flat = tmp_path / "flat"
    flat.mkdir()
    assert project_at(flat, tools=[flat]).root == flat.resolve()


@pytest.mark.parametrize(
    "argv",
    [("schema", "-o"), ("export", "mcp", "-o"), ("test", "-t", "alpha", "--junit")],
    ids=lambda argv: argv[0],
)
def test_an_output_file_that_cannot_be_written_is_a_usage_error_in_every_command(
    project: Path, capsys: Capture, argv: tuple[str, ...]
) -> None:
    (project / "tools.d" / "alpha.yaml").write_text(
        GOOD.format(name="alpha") + "tests:\n  - name: one\n    input: {}\n    output: 1\n",
        "utf-8",
    )
    target = project / "missing" / "out.file"
    code, _, err = toolctl(capsys, *argv, str(target))
    assert code == 2, err
    assert "cannot write" in err and f"{target}: No such file or directory" in err
    assert "internal error" not in err and "Traceback" not in err


def test_schema_to_an_unwritable_file_is_a_usage_error(capsys: Capture, tmp_path: Path) -> None:
    target = tmp_path / "missing" / "tool.v1.schema.json"
    code, out, err = toolctl(capsys, "schema", "-o", str(target))
    assert (code, out) == (2, "")
    assert f"cannot write {target}: No such file or directory" in err
    assert "internal error" not in err
    code, out, _ = toolctl(capsys, "schema", "-o", str(tmp_path / "schema.json"))
    assert code == 0 and '"$schema"' in (tmp_path / "schema.json").read_text("utf-8")


def test_what_handlers_print_during_test_keeps_the_json_report_parseable(
    project: Path, capfd: Capture
) -> None:
    # as `toolctl run` does: print() and file descriptor 1 go to stderr, stdout is the report
    (project / "handlers.py").write_text(
        "import os\n\n\ndef gamma(args):\n    print('noise')\n    os.write(1, b'fd noise\\n')\n"
        "    return 2\n",
        "utf-8",
    )
    (project / "tools.d" / "gamma.yaml").write_text(
        GOOD.format(name="gamma") + "tests:\n  - name: two\n    input: {}\n    output: 2\n",
        "utf-8",
    )
    code, out, err = toolctl(capfd, "test", "--format", "json")
    assert code == 0, err
    assert json.loads(out)["counts"]["passed"] == 1
    assert "noise" in err and "fd noise" in err


def test_a_failed_case_shows_control_and_bidi_characters_of_tool_data_escaped(
    project: Path, capsys: Capture
) -> None:
    # as `toolctl run` does: a handler's error text must not drive the terminal
    (project / "handlers.py").write_text(
        "def gamma(args):\n    raise ValueError('\\x1b[2Jred\\u202eevil')\n", "utf-8"
    )
    (project / "tools.d" / "gamma.yaml").write_text(
        GOOD.format(name="gamma") + "tests:\n  - name: two\n    input: {}\n    output: 2\n",
        "utf-8",
    )
    code, out, _ = toolctl(capsys, "test")
    assert code == 1
    assert "ValueError: \\u{001b}[2Jred\\u{202e}evil" in out
    assert "\x1b" not in out and "\u202e" not in out


def test_list_shows_yaml_text_as_data_not_markup_or_terminal_controls(
    project: Path, capsys: Capture
) -> None:
    (project / "tools.d" / "gamma.yaml").write_text(
        GOOD.format(name="gamma") + 'title: "Gamma [/] [red]x\\e[2J\\u202e"\n', "utf-8"
    )
    code, out, err = toolctl(capsys, "list")
    assert code == 0, err  # was an internal error (exit 3): rich read "[/]" as a closing tag
    assert "Gamma [/] [red]x\\u{001b}[2J\\u{202e}" in out
    assert "\x1b" not in out and "\u202e" not in out
