"""Odd input while loading (issue 20, class 6): a clear diagnostic or usage error, never exit 3.

Deeply nested ``pyproject.toml`` files in any directory above the project, tools trees nested
thousands of levels deep, unreadable subdirectories and files with more broken tools than the
diagnostics cap each end in a located message; the rest of the registry still loads.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import Capture
from tests.cli_helpers import toolctl as call_in_process
from toolctl.config import find_config
from toolctl.errors import ConfigError
from toolctl.formatcheck import MAX_SHOWN
from toolctl.loader import load_registry

from .conftest import codes, write

TOOL = "toolctl: 1\nname: ok\ndescription: A tool that loads.\n"


def _cli(capsys: Capture, *argv: str) -> tuple[int, str]:
    code, _, err = call_in_process(capsys, *argv)
    return code, err


@pytest.mark.parametrize(
    "body",
    [
        "x = " + "[" * 100_000 + "]" * 100_000,  # tomllib recurses per level
        "x = " + "{a = " * 5_000 + "1" + "}" * 5_000,
        "x." + "a." * 100_000 + "b = 1",  # tomllib is quadratic in dotted parts
        "x = " + "[" * 200 + "]" * 200,  # parses, but nests past the limit
    ],
    ids=["arrays", "inline-tables", "dotted-key", "parsed-but-deep"],
)
def test_deeply_nested_pyproject_in_a_parent_is_a_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture, body: str
) -> None:
    (tmp_path / "pyproject.toml").write_text(f"[tool.toolctl]\n{body}\n", encoding="utf-8")
    project = write(tmp_path / "deep" / "er", {"tools.d/ok.yaml": TOOL})
    with pytest.raises(ConfigError, match=r"pyproject\.toml:[12]:1: .*(nest|dotted key)"):
        find_config(project)
    monkeypatch.chdir(project)
    code, err = _cli(capsys, "validate")
    assert code == 1
    assert "pyproject.toml" in err and "internal error" not in err and "Traceback" not in err


def test_a_pyproject_without_a_toolctl_table_is_not_parsed(tmp_path: Path) -> None:
    # another tool's file above the project, however odd, is none of toolctl's business
    (tmp_path / "pyproject.toml").write_text("x = " + "[" * 100_000 + "\n", encoding="utf-8")
    assert find_config(write(tmp_path / "p", {"tools.d/ok.yaml": TOOL})) is None


def test_long_dotted_values_and_float_arrays_are_not_mistaken_for_deep_keys(
    tmp_path: Path,
) -> None:
    floats = "[" + ", ".join(["1.5"] * 200) + "]"
    text = f'[tool.toolctl]\ntools = "tools.d"\n[tool.other]\nv = "{"a." * 300}"\nf = {floats}\n'
    (tmp_path / "pyproject.toml").write_text(text, encoding="utf-8")
    found = find_config(tmp_path)
    assert found is not None and found[1] == {"tools": "tools.d"}


LEVELS = 400


def _depth() -> int:
    frame, depth = sys._getframe(), 0
    while frame is not None:
        frame, depth = frame.f_back, depth + 1  # type: ignore[assignment]
    return depth


@pytest.fixture
def deep_tree(tmp_path: Path) -> Iterator[Path]:
    """``tools.d/a/a/.../deep.yaml``, LEVELS directories deep, next to ``tools.d/ok.yaml``,
    with the recursion limit lowered below LEVELS frames for the test: a walk that recursed
    once per level fails as it would on a tree thousands of levels deep, and the tree stays
    small enough for the recursive clean-up of temporary directories."""
    tools = write(tmp_path, {"tools.d/ok.yaml": TOOL}) / "tools.d"
    deep = tools.joinpath(*["a"] * LEVELS)
    deep.mkdir(parents=True)
    (deep / "deep.yaml").write_text(TOOL.replace("name: ok", "name: deep"), encoding="utf-8")
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(_depth() + LEVELS // 2)
    try:
        yield tools
    finally:
        sys.setrecursionlimit(limit)


def test_a_tools_tree_thousands_of_levels_deep_loads(
    tmp_path: Path, deep_tree: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    registry = load_registry(deep_tree, packs=False)
    assert sorted(registry.tools) == ["deep", "ok"]


def test_reload_stamps_a_tools_tree_thousands_of_levels_deep(
    tmp_path: Path, deep_tree: Path
) -> None:
    pytest.importorskip("mcp")
    from toolctl.config import project_at
    from toolctl.server.reload import stamp

    stamped = stamp(project_at(tmp_path))
    assert any(name.endswith("deep.yaml") for name in stamped)


def test_an_unreadable_subdirectory_is_located_and_the_rest_loads(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    write(tmp_path, {"tools.d/ok.yaml": TOOL, "tools.d/locked/hidden.yaml": TOOL})
    locked = str(tmp_path / "tools.d" / "locked")
    real_scandir = os.scandir

    def scandir(path: Any) -> Any:
        # chmod 000 does not stop root (the test may run as root): refuse as the kernel would
        if os.fspath(path).endswith(os.sep + "locked"):
            raise PermissionError(13, "Permission denied", os.fspath(path))
        return real_scandir(path)

    monkeypatch.setattr(os, "scandir", scandir)
    monkeypatch.chdir(tmp_path)
    registry = load_registry(tmp_path / "tools.d", packs=False)
    assert list(registry.tools) == ["ok"] and codes(registry) == ["TC110"]
    problem = registry.diagnostics[0]
    assert problem.file == "tools.d/locked" and "cannot list directory" in problem.message
    assert problem.hint and "chmod" in problem.hint
    code, err = _cli(capsys, "validate")
    assert code == 1 and "tools.d/locked: error TC110 cannot list directory" in err
    assert os.path.isdir(locked)


def _many_broken(count: int) -> str:
    """``count`` tools with three format errors each (two unknown keys, an example without
    ``input``), then one good tool."""
    items = "".join(
        f"  - name: t{i}\n    description: d\n    bogus1: 1\n    bogus2: 2\n"
        "    inputExamples:\n      - {}\n"
        for i in range(count)
    )
    return f"toolctl: 1\ntools:\n{items}  - name: good\n    description: A good tool.\n"


def test_more_broken_tools_than_the_diagnostics_cap_are_all_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    # The cap once truncated the list the loader used to skip broken tools: tool 17 onwards
    # were built unchecked and `validate` died with "internal error: KeyError: 'input'".
    write(tmp_path, {"tools.d/many.yaml": _many_broken(40)})
    monkeypatch.chdir(tmp_path)
    registry = load_registry(tmp_path / "tools.d", packs=False)
    assert list(registry.tools) == ["good"]
    assert len(registry.diagnostics) == MAX_SHOWN  # the cap limits what is shown only
    code, err = _cli(capsys, "validate")
    assert code == 1 and "internal error" not in err and "KeyError" not in err


def test_a_file_level_error_past_the_cap_still_refuses_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the unknown top-level key is reported after 120 tool errors: it must still count
    text = _many_broken(40).replace("tools:\n", "zzz: 1\ntools:\n")
    write(tmp_path, {"tools.d/many.yaml": text})
    monkeypatch.chdir(tmp_path)
    assert load_registry(tmp_path / "tools.d", packs=False).tools == {}
