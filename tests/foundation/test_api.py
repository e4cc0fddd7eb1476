"""The Python API: toolctl.load, Registry, ToolSpec, project configuration."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolctl
from toolctl.config import project_for
from toolctl.errors import ConfigError, DeclarationError, UnknownToolError

from .conftest import write

TWO_TOOLS = {
    "tools.d/a.yaml": "toolctl: 1\nname: alpha\ndescription: A.\ntags: [x]\n",
    "tools.d/b.yaml": "toolctl: 1\nname: beta\ndescription: B.\ntags: [y]\nenabled: false\n",
}
BROKEN = {"tools.d/c.yaml": "toolctl: 1\nname: gamma\n", "tools.d/d.yaml": "toolctl: 1\nnam: d\n"}


def test_every_public_name_resolves() -> None:
    """``__all__`` and the lazy exports agree, and what ``load`` raises can be caught by name."""
    for name in toolctl.__all__:
        assert getattr(toolctl, name) is not None
        assert name in dir(toolctl)
    assert toolctl.DeclarationError is DeclarationError
    with pytest.raises(AttributeError):
        toolctl.nothing_here  # noqa: B018


def test_load_returns_the_registry(tmp_path: Path) -> None:
    write(tmp_path, TWO_TOOLS)
    registry = toolctl.load(tmp_path / "tools.d", packs=False)
    assert isinstance(registry, toolctl.Registry)
    assert [s.name for s in registry] == ["alpha", "beta"]
    assert registry.ok and "alpha" in registry and len(registry) == 2
    assert [s.name for s in registry.select()] == ["alpha"]  # disabled left out
    assert [s.name for s in registry.select(include_disabled=True, tags=["y"])] == ["beta"]
    assert [s.name for s in registry.select(names=["beta"])] == ["beta"]  # named: selected


def test_strict_load_raises_with_every_problem(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(write(tmp_path, {**TWO_TOOLS, **BROKEN}))
    with pytest.raises(DeclarationError) as info:
        toolctl.load("tools.d", packs=False)
    assert [(d.file, d.code) for d in info.value.diagnostics] == [
        ("tools.d/c.yaml", "TC201"),
        ("tools.d/d.yaml", "TC201"),
        ("tools.d/d.yaml", "TC201"),
        ("tools.d/d.yaml", "TC201"),
    ]
    assert info.value.message.startswith("4 error(s) in the registry; first: tools.d/c.yaml:1:1")


def test_lenient_load_keeps_the_valid_tools(tmp_path: Path) -> None:
    write(tmp_path, {**TWO_TOOLS, **BROKEN})
    registry = toolctl.load(tmp_path / "tools.d", strict=False, packs=False)
    assert [s.name for s in registry] == ["alpha", "beta"]
    assert not registry.ok
    assert {d.code for d in registry.diagnostics} == {"TC201"}


def test_unknown_tool_suggests_names(tmp_path: Path) -> None:
    write(tmp_path, TWO_TOOLS)
    registry = toolctl.load(tmp_path / "tools.d", packs=False)
    with pytest.raises(UnknownToolError) as info:
        registry.get("alpah")
    assert info.value.hint == "did you mean alpha?"


def test_spec_locates_any_path_and_has_a_stable_digest(tmp_path: Path) -> None:
    text = (
        "toolctl: 1\nname: t\ndescription: d\n"
        "inputSchema:\n  type: object\n  properties:\n    city: {type: string}\n"
    )
    write(tmp_path, {"tools.d/t.yaml": text})
    spec = toolctl.load(tmp_path / "tools.d", packs=False).get("t")
    assert spec.locate("inputSchema", "properties", "city", "type").line == 7
    assert spec.locate("inputSchema", "properties", "city", key=True).col == 5
    assert spec.locate("nothing", "here") == spec.locate()
    digest = spec.digest
    assert toolctl.load(tmp_path / "tools.d", packs=False).get("t").digest == digest
    write(tmp_path, {"tools.d/t.yaml": text.replace("string", "integer")})
    assert toolctl.load(tmp_path / "tools.d", packs=False).get("t").digest != digest


# configuration ------------------------------------------------------------------------------


def test_config_found_from_a_subdirectory(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(
        tmp_path,
        {
            "toolctl.yaml": "tools: [defs, more/extra.yaml]\npythonPath: [lib, .]\n",
            "defs/a.yaml": TWO_TOOLS["tools.d/a.yaml"],
            "more/extra.yaml": TWO_TOOLS["tools.d/b.yaml"],
            "deep/er/.keep": "",
        },
    )
    monkeypatch.chdir(tmp_path / "deep" / "er")
    project = project_for()
    assert project.config_file == tmp_path / "toolctl.yaml"
    assert project.tool_paths == [tmp_path / "defs", tmp_path / "more" / "extra.yaml"]
    assert project.python_path == [tmp_path / "lib", tmp_path]
    assert [s.name for s in toolctl.load(packs=False)] == ["alpha", "beta"]


def test_pyproject_section_is_a_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    write(
        tmp_path,
        {
            "pyproject.toml": '[project]\nname = "x"\n\n[tool.toolctl]\ntools = "defs"\n',
            "defs/a.yaml": TWO_TOOLS["tools.d/a.yaml"],
        },
    )
    monkeypatch.chdir(tmp_path)
    assert [s.name for s in toolctl.load(packs=False)] == ["alpha"]


@pytest.mark.parametrize("tool", ['"x"', "1", "[1, 2]"])
def test_pyproject_whose_tool_is_not_a_table_is_no_config(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str
) -> None:
    """A ``tool`` key that is not a table holds no ``[tool.toolctl]``: the directory is no
    project config (as without the key), not a crash while looking for one."""
    write(tmp_path, {"pyproject.toml": '[project]\nname = "x"\n', **TWO_TOOLS})
    text = (tmp_path / "pyproject.toml").read_text()
    (tmp_path / "pyproject.toml").write_text(f"tool = {tool}\n{text}")
    monkeypatch.chdir(tmp_path)
    assert project_for().config_file is None
    assert [s.name for s in toolctl.load(packs=False)] == ["alpha", "beta"]


@pytest.mark.parametrize(
    ("config", "message"),
    [
        ("tool: tools.d\n", "unknown setting(s) tool"),
        ("tools: 3\n", "'tools' must be a path or a list of paths"),
        ("state: [a]\n", "'state' must be a path"),
        ("- a\n", "must be a mapping"),
        ("tools: &a x\n", "anchors and aliases are not allowed"),
    ],
)
def test_bad_config_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, message: str
) -> None:
    write(tmp_path, {"toolctl.yaml": config})
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ConfigError) as info:
        project_for()
    assert message in str(info.value)
