"""What a function does not say is reported as a gap (exit 1), never guessed."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

import toolctl
from tests.scaffold.test_new import REPO, make_project
from toolctl.cli.app import run as cli
from toolctl.diagnostics import Severity


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(make_project(tmp_path))
    return tmp_path


@pytest.mark.parametrize(
    ("name", "gaps"),
    [
        (
            "untyped",
            ["parameter 'query': no type annotation", "return: no return annotation"],
        ),
        (
            "variadic",
            ["parameter 'names': *args cannot be passed by name", "parameter 'options': **kwargs"],
        ),
        ("callback", ["parameter 'fn': type Callable[[int], int] has no JSON Schema equivalent"]),
        ("undocumented", ["description: no docstring"]),
    ],
)
def test_gaps_are_reported_and_marked(
    project: Path, capsys: pytest.CaptureFixture[str], name: str, gaps: list[str]
) -> None:
    assert cli(["new", "--from", f"tests.scaffold.gaps:{name}"]) == 1
    err = capsys.readouterr().err
    text = (project / "tools.d" / f"{name}.yaml").read_text("utf-8")
    for gap in gaps:
        assert f"toolctl: gap: {gap}" in err
        assert f"# TODO {gap}" in text
    # the file is still a valid declaration: the unknown part is left open, not invented
    registry = toolctl.load_project(project)
    assert name in registry.tools
    assert not [d for d in registry.diagnostics if d.severity is Severity.ERROR]


def test_untyped_parameter_is_left_open(project: Path) -> None:
    cli(["new", "--from", "tests.scaffold.gaps:untyped"])
    doc = yaml.safe_load((project / "tools.d" / "untyped.yaml").read_text("utf-8"))
    assert doc["inputSchema"]["properties"]["query"] == {}
    assert "outputSchema" not in doc


def test_refuses_to_overwrite_without_force(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = "tests.scaffold.corpus:mean"
    assert cli(["new", "--from", ref]) == 0
    tool = project / "tools.d" / "mean.yaml"
    tool.write_text(tool.read_text("utf-8") + "# my edit\n", "utf-8")
    assert cli(["new", "--from", ref]) == 2
    assert "refusing to overwrite" in capsys.readouterr().err
    assert tool.read_text("utf-8").endswith("# my edit\n")
    assert cli(["new", "--from", ref, "--force"]) == 0
    assert not tool.read_text("utf-8").endswith("# my edit\n")


def test_name_and_output_options(project: Path) -> None:
    out = project / "elsewhere" / "avg.yaml"
    assert (
        cli(["new", "--from", "tests.scaffold.corpus:mean", "--name", "average", "-o", str(out)])
        == 0
    )
    doc = yaml.safe_load(out.read_text("utf-8"))
    assert doc["name"] == "average"
    assert doc["handler"] == "average_tool:handler"
    assert (project / "handlers" / "average_tool.py").is_file()


@pytest.mark.parametrize(
    ("ref", "message"),
    [
        ("no_such_module_xyz:f", "cannot import no_such_module_xyz:f"),
        ("tests.scaffold.corpus:nope", "cannot import tests.scaffold.corpus:nope"),
        ("tests.scaffold.corpus:Point", "is not a function"),
        ("not a reference", "cannot import not a reference"),
        ("tests.scaffold.gaps:Service.search", "is a method: calling it needs an instance"),
    ],
)
def test_bad_references_are_usage_errors(
    project: Path, capsys: pytest.CaptureFixture[str], ref: str, message: str
) -> None:
    assert cli(["new", "--from", ref]) == 2
    err = capsys.readouterr().err
    assert message in err
    assert "Traceback" not in err
    assert not list((project / "tools.d").iterdir())


@pytest.mark.parametrize(
    ("code", "hint"),
    [
        ("raise RuntimeError('boom')\n", "hint: fix the module: toolctl new imports it"),
        ("def f(x: int -> int:\n", "hint: fix the module: toolctl new imports it"),
        ("import no_such_dependency_xyz\n", "hint: install 'no_such_dependency_xyz'"),
        (None, "hint: give module:function importable from pythonPath (handlers, "),
    ],
    ids=["raises", "syntax", "dependency", "absent"],
)
def test_a_module_that_fails_to_import_gets_the_hint_that_fixes_it(
    project: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    request: pytest.FixtureRequest,
    code: str | None,
    hint: str,
) -> None:
    # the module was found and its own code failed: "give an importable module" was wrong
    module = f"scaffold_broken_{request.node.callspec.id}"  # its own: sys.path keeps the others
    (project / "handlers").mkdir()
    if code is not None:
        (project / "handlers" / f"{module}.py").write_text(code, "utf-8")
    monkeypatch.delitem(sys.modules, module, raising=False)
    assert cli(["new", "--from", f"{module}:f"]) == 2
    err = capsys.readouterr().err
    assert f"cannot import {module}:f" in err and hint in err
    assert "Traceback" not in err


def test_help_says_it_imports(capsys: pytest.CaptureFixture[str]) -> None:
    cli(["new", "--help"])
    out = " ".join(capsys.readouterr().out.split())
    assert "IMPORTS the function's module" in out


@pytest.mark.parametrize(
    ("flag", "annotations"),
    [
        ("--read-only", {"readOnlyHint": True}),
        ("--destructive", {"readOnlyHint": False, "destructiveHint": True}),
    ],
)
def test_effects_are_declared_only_when_said(
    project: Path, flag: str, annotations: dict[str, bool]
) -> None:
    assert cli(["new", "--from", "tests.scaffold.corpus:mean", flag]) == 0
    doc = yaml.safe_load((project / "tools.d" / "mean.yaml").read_text("utf-8"))
    assert doc["mcp"] == {"annotations": annotations}
    (project / "tools.d" / "mean.yaml").unlink()
    (project / "handlers" / "mean_tool.py").unlink()
    assert cli(["new", "--from", "tests.scaffold.corpus:mean"]) == 0
    assert "mcp" not in yaml.safe_load((project / "tools.d" / "mean.yaml").read_text("utf-8"))


def test_a_missing_tools_directory_is_created(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # no toolctl.yaml, no tools.d: the defaults
    monkeypatch.syspath_prepend(str(REPO))
    assert cli(["new", "--from", "tests.scaffold.corpus:mean"]) == 0
    assert (tmp_path / "tools.d" / "mean.yaml").is_file()
    assert (tmp_path / "mean_tool.py").is_file()


def test_a_tools_file_needs_output(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "toolctl.yaml").write_text(
        f"tools: tools.yaml\npythonPath: [{REPO.as_posix()}]\n", "utf-8"
    )
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(tmp_path)
        assert cli(["new", "--from", "tests.scaffold.corpus:mean"]) == 2
    assert "say where to write the tool file with --output" in capsys.readouterr().err


def test_a_staticmethod_is_declared(project: Path) -> None:
    assert cli(["new", "--from", "tests.scaffold.gaps:Service.ping", "--name", "ping"]) == 0
    module = (project / "handlers" / "ping_tool.py").read_text("utf-8")
    assert "from tests.scaffold.gaps import Service\n" in module
    assert "handler = from_function(Service.ping)\n" in module
    registry = toolctl.load_project(project)
    assert registry.call("ping", {"host": "a"}, store=False).output == {"result": True}


def test_registry_option_names_the_project(tmp_path: Path) -> None:
    (tmp_path / "proj").mkdir()
    root = make_project(tmp_path / "proj")
    assert cli(["new", "--from", "tests.scaffold.corpus:mean", "-r", str(root)]) == 0
    assert (root / "tools.d" / "mean.yaml").is_file()
    assert (root / "handlers" / "mean_tool.py").is_file()
    assert "mean" in toolctl.load_project(root).tools


def test_a_name_taken_by_another_file_is_refused(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "tools.d" / "stats.yaml").write_text(
        "toolctl: 1\nname: mean\ndescription: The mean of some numbers, declared by hand.\n",
        "utf-8",
    )
    assert cli(["new", "--from", "tests.scaffold.corpus:mean"]) == 2
    err = capsys.readouterr().err
    assert "a tool named 'mean' exists already: tools.d/stats.yaml:2:7" in err
    assert not (project / "tools.d" / "mean.yaml").exists()
    # --force overwrites new's own files, never another file's tool name (docs/new.md)
    assert cli(["new", "--from", "tests.scaffold.corpus:mean", "--force"]) == 2
    assert not (project / "tools.d" / "mean.yaml").exists()
    assert cli(["new", "--from", "tests.scaffold.corpus:mean", "--name", "weighted_mean"]) == 0


def test_a_handler_dir_off_the_python_path_is_pointed_out(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ref = "tests.scaffold.corpus:mean"
    assert cli(["new", "--from", ref, "--handler-dir", "elsewhere"]) == 0
    err = capsys.readouterr().err
    assert "toolctl: note: elsewhere is not on pythonPath: add it in toolctl.yaml" in err
    assert (project / "elsewhere" / "mean_tool.py").is_file()
