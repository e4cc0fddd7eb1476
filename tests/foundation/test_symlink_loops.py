"""Symlink loops anywhere a path is followed: a located diagnostic, never an internal error."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .conftest import run_toolctl, write

TOOL = "toolctl: 1\nname: ok\ndescription: d\ninputSchema: {type: object}\n"


def _loop(tmp_path: Path) -> None:
    """tools.d/l1.yaml -> l2.yaml -> l1.yaml beside a good tool."""
    write(tmp_path, {"tools.d/ok.yaml": TOOL})
    (tmp_path / "tools.d" / "l1.yaml").symlink_to("l2.yaml")
    (tmp_path / "tools.d" / "l2.yaml").symlink_to("l1.yaml")


def test_loop_in_tools_dir_is_located_and_other_files_load(
    registry_of: Any, tmp_path: Path
) -> None:
    _loop(tmp_path)
    registry = registry_of({})
    assert list(registry.tools) == ["ok"]
    found = {(d.file, d.code) for d in registry.diagnostics}
    assert found == {("tools.d/l1.yaml", "TC110"), ("tools.d/l2.yaml", "TC110")}
    assert all("symlink loop" in d.message for d in registry.diagnostics)


def test_ref_to_a_self_looping_symlink_is_located(registry_of: Any, tmp_path: Path) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "self.schema.json").symlink_to("self.schema.json")
    registry = registry_of(
        {
            "tools.d/t.yaml": "toolctl: 1\nname: t\ndescription: d\n"
            "inputSchema: {type: object, properties: {a: {$ref: self.schema.json}}}\n"
        }
    )
    [diag] = registry.diagnostics
    assert (diag.file, diag.line, diag.code) == ("tools.d/t.yaml", 4, "TC302")
    assert "symlink loop" in diag.message


@pytest.mark.parametrize("command", ["validate", "lint", "list", "test"])
def test_cli_reports_a_loop_with_exit_1_not_3(tmp_path: Path, command: str) -> None:
    _loop(tmp_path)
    result = run_toolctl(command, cwd=tmp_path)
    assert result.returncode == 1 if command != "list" else result.returncode in (0, 1)
    assert "internal error" not in result.stderr
    assert "tools.d/l1.yaml: error TC110 symlink loop" in result.stdout + result.stderr


@pytest.mark.parametrize("how", ["argument", "config"])
def test_looping_tools_path_is_reported(tmp_path: Path, how: str) -> None:
    (tmp_path / "a.yaml").symlink_to("a.yaml")
    if how == "config":
        (tmp_path / "toolctl.yaml").write_text("tools: [a.yaml]\n")
    result = run_toolctl("validate", *(["a.yaml"] if how == "argument" else []), cwd=tmp_path)
    assert result.returncode == 1, result.stderr
    assert "a.yaml: error TC110 symlink loop" in result.stdout + result.stderr
