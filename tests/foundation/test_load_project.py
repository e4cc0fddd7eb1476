"""``toolctl.load_project(root)``: the registry of a project root, from anywhere."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolctl
from toolctl.errors import ConfigError

TOOL = "toolctl: 1\nname: {name}\ndescription: The {name} tool.\n"


@pytest.fixture
def root(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "defs").mkdir(parents=True)
    (root / "defs" / "a.yaml").write_text(TOOL.format(name="from_config"))
    (root / "toolctl.yaml").write_text("tools: [defs]\nstate: runs.db\n")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # nothing found from the working directory
    return root


def test_load_project_uses_the_tools_paths_of_the_config_at_root(root: Path) -> None:
    registry = toolctl.load_project(root)
    assert list(registry.tools) == ["from_config"]
    project = registry.project
    assert project is not None and project.root == root.resolve()
    assert project.tool_paths == [(root / "defs").resolve()]
    assert project.state_path == root.resolve() / "runs.db"
    assert list(toolctl.load(project=root).tools) == ["from_config"]


def test_load_of_a_path_still_takes_it_as_the_tools_path(root: Path) -> None:
    registry = toolctl.load(root / "defs")
    assert list(registry.tools) == ["from_config"]
    assert registry.project is not None and registry.project.root == root.resolve()


def test_a_root_without_config_defaults_to_tools_d(tmp_path: Path) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "b.yaml").write_text(TOOL.format(name="plain"))
    assert list(toolctl.load_project(tmp_path).tools) == ["plain"]


def test_mistakes_are_clear(root: Path) -> None:
    with pytest.raises(ConfigError, match="not a directory"):
        toolctl.load_project(root / "toolctl.yaml")
    with pytest.raises(TypeError, match="not both"):
        toolctl.load(root / "defs", project=root)
