"""What a command line's positional arguments and ``--registry`` name: tools or registry paths,
and the project they give. Without Typer (the quick path, :mod:`toolctl.cli.quick`, uses it)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolctl.config import Project

_TOOL_FILES = (".yaml", ".yml")
_CONFIG_FILES = ("toolctl.yaml", "pyproject.toml")


def _holds_tools(directory: Path) -> bool:
    """A project root or a tools directory: a config file, or tool files in it or one level
    down (a handler package named like its tool holds none)."""
    try:
        if any((directory / name).is_file() for name in _CONFIG_FILES):
            return True
        for entry in os.scandir(directory):
            if entry.name.endswith(_TOOL_FILES):
                return True
            nested = entry.is_dir(follow_symlinks=False) and not entry.name.startswith((".", "_"))
            if nested and any(e.name.endswith(_TOOL_FILES) for e in os.scandir(entry.path)):
                return True
    except OSError:
        return False
    return False


def _looks_like_path(arg: str) -> bool:
    """A positional argument that names files rather than a tool (the old grammar): written
    as a path, a tool file, or a directory holding tools (``tools.d``, a project root)."""
    if "/" in arg or os.sep in arg or arg.startswith((".", "~")):
        return True
    if arg.endswith((*_TOOL_FILES, ".toml", ".json", ".d")):
        return True
    path = Path(arg)
    return path.is_dir() and _holds_tools(path)


def split_targets(args: list[str] | None) -> tuple[list[str], list[Path]]:
    """Positional arguments as (tool names, registry paths).

    Positionals name tools; one that is a path (it contains a slash, starts with a dot, ends in
    .yaml/.yml/.toml/.d, or is a directory holding tools) is a registry path, as before the
    grammar named tools, so ``toolctl test tools.d`` keeps working while ``toolctl test
    calculator`` names the tool even beside a handler package ``calculator/``.
    """
    names: list[str] = []
    paths: list[Path] = []
    for arg in args or ():
        if _looks_like_path(arg):
            paths.append(Path(arg).expanduser())
        else:
            names.append(arg)
    return names, paths


def project_of(registry: Path | None = None, paths: list[Path] | None = None) -> Project:
    """The project the command line names: ``--registry`` and/or positional paths.

    Each is a tool file, a tools directory or a project root (:func:`toolctl.config.
    find_project`); with several, the first gives the project and all give the tool paths.
    """
    from toolctl.config import find_project

    given = [*(paths or []), *([registry] if registry is not None else [])]
    if not given:
        return find_project(None)
    project = find_project(given[0])
    if len(given) > 1:
        tool_paths: list[Path] = []
        for path in given:
            for tool_path in find_project(path).tool_paths:
                if tool_path not in tool_paths:
                    tool_paths.append(tool_path)
        project.tool_paths = tool_paths
    return project
