"""Loading the registry a command line names, and saying what was loaded or why a tool is missing.

Every command goes through :func:`load` (or :func:`for_tool`), so ``--registry``, positional
paths and ``--packs`` mean the same everywhere.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

if TYPE_CHECKING:
    from toolctl.config import Project
    from toolctl.diagnostics import Diagnostic
    from toolctl.registry import Registry
    from toolctl.runtime.history.records import RunStore


def load(
    registry: Path | None = None, paths: list[Path] | None = None, *, packs: bool = True
) -> Registry:
    """The registry named by ``--registry`` and/or positional paths, with every diagnostic."""
    from toolctl.cli.targets import project_of
    from toolctl.loader import load_registry

    return load_registry(project=project_of(registry, paths), packs=packs)


def _errors(registry: Registry) -> list[Diagnostic]:
    return [d for d in registry.diagnostics if d.severity.value == "error"]


def _declares(file: str, name: str) -> bool:
    """Whether the text of ``file`` has a ``name: NAME`` line (files that failed to parse)."""
    try:
        text = Path(file).read_text("utf-8", errors="replace")
    except OSError:
        return False
    pattern = rf"^[\s-]*name:\s*['\"]?{re.escape(name)}['\"]?\s*(#.*)?$"
    return re.search(pattern, text, re.MULTILINE) is not None


def no_tools_path(registry: Registry) -> str | None:
    """The tools path that does not exist (an empty directory, a wrong -r), if that is the
    registry's trouble."""
    for d in _errors(registry):
        if d.code == "TC110" and d.message == "tools path not found":
            return d.file or "tools.d"
    return None


def fix_hint(registry: Registry, hint: str) -> str:
    """``hint``, or how to start a project when there is none to fix."""
    missing = no_tools_path(registry)
    if missing is None:
        return hint
    return f"{missing} does not exist: start a project with toolctl init, or name one: -r PATH"


def missing_tool_problems(registry: Registry, name: str) -> list[Diagnostic]:
    """The errors that explain why ``name`` is not in ``registry``: its own, or those of the
    file that declares it but failed to load."""
    errors = _errors(registry)
    own = [d for d in errors if d.tool == name]
    if own:
        return own
    files = {d.file for d in errors if d.file and d.tool not in registry.tools}
    declaring = {f for f in files if _declares(f, name)}
    return [d for d in errors if d.file in declaring]


def require_tool(
    registry: Registry, name: str, action: str = "run", *, enabled: bool = True
) -> None:
    """A usage error unless ``name`` is in the registry (and ``enabled``): the diagnostics of
    the file that failed to load it, or ``no tool named`` with suggestions."""
    from toolctl.errors import UsageError

    if name not in registry.tools:
        problems = missing_tool_problems(registry, name)
        if problems:
            raise UsageError(
                f"tool {name!r} has errors (above) and cannot {action}",
                hint="fix them; `toolctl validate` lists every problem",
                diagnostics=problems,
            )
        missing = no_tools_path(registry)
        if missing is not None and not registry.tools:
            raise UsageError(
                f"no tool named {name!r}: there are no tools here",
                hint=fix_hint(registry, ""),
                diagnostics=_errors(registry),
            )
        failed = sorted({d.file for d in _errors(registry) if d.file and d.tool is None})
        if failed:
            raise UsageError(
                f"no tool named {name!r}; {len(failed)} file(s) failed to load (above)",
                hint="it may be declared there: fix them (toolctl validate)",
                diagnostics=[d for d in _errors(registry) if d.file in failed],
            )
        registry.get(name)  # raises UnknownToolError with "did you mean"
    if enabled:
        registry.get(name).check_enabled(action)


def for_tool(
    registry_path: Path | None, tool: str | None = None, *, packs: bool = True
) -> Registry:
    """The registry (broken tools left out) for a command about ``tool``."""
    registry = load(registry_path, packs=packs)
    if tool is not None:
        require_tool(registry, tool)
    return registry


@overload
def state_store(
    registry_path: Path | None, state: str | None, *, create: Literal[True] = True
) -> RunStore: ...


@overload
def state_store(
    registry_path: Path | None, state: str | None, *, create: bool
) -> RunStore | None: ...


def state_store(
    registry_path: Path | None, state: str | None, *, create: bool = True
) -> RunStore | None:
    """The run history: ``--state`` (a file or a ``postgresql://`` URL) or the project's (None
    when an SQLite history does not exist yet and ``create`` is false)."""
    from toolctl.cli.targets import project_of
    from toolctl.config import check_state
    from toolctl.errors import ConfigError, UsageError
    from toolctl.runtime.history.sqlite import is_url, open_store, state_location

    if state is not None:
        try:
            check_state(state, "--state")
        except ConfigError as exc:
            raise UsageError(exc.message, hint=exc.hint) from None
    holder = _Holder(project_of(registry_path))
    where: str | Path = state if state is not None else state_location(holder)
    if is_url(where):
        return open_store(str(where))
    where = Path(where)
    if not create and not where.exists():
        return None
    return open_store(where if state is not None else None, holder)


class _Holder:
    """Something with a ``project`` (what the store helpers look at)."""

    def __init__(self, project: Project | None) -> None:
        self.project = project


def checked(registry: Registry) -> str:
    """What a summary line says was checked: every tool, including those that failed.

    ``5 tool(s) in tools.d`` or ``5 tool(s) in tools.d (2 with errors, 1 file(s) that failed to
    load)``.
    """
    from toolctl.loader import display_path

    errors = _errors(registry)
    failed_tools = {(d.file, d.tool) for d in errors if d.tool and d.tool not in registry.tools}
    tool_files = {file for file, _ in failed_tools}
    failed_files = {d.file for d in errors if d.file and not d.tool and d.file not in tool_files}
    loaded_files = {s.location.file for s in registry}
    failed_files -= loaded_files  # a file-level problem in a file whose tools loaded
    total = len(registry) + len(failed_tools)
    paths = registry.project.tool_paths if registry.project is not None else []
    where = ", ".join(display_path(p) for p in paths) or "the registry"
    text = f"{total} tool(s) in {where}"
    notes = []
    if failed_tools:
        notes.append(f"{len(failed_tools)} with errors")
    if failed_files:
        notes.append(f"{len(failed_files)} file(s) that failed to load")
    return text + (f" ({', '.join(notes)})" if notes else "")
