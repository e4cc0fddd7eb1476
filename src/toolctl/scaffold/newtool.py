"""``toolctl new --from module:function``: plan the files that declare an existing function.

:func:`plan_from_function` imports the function (from the project's ``pythonPath`` and the
installed packages, as the runtime will), drafts its declaration and returns the files to
write: the tool file and a handler module that adapts the function to ``fn(input)``.
:func:`write_files` writes a plan without overwriting anything unless asked to.
"""

from __future__ import annotations

import importlib
import inspect
import os
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path

from toolctl.config import CONFIG_NAME, Project
from toolctl.errors import ToolctlError, UsageError
from toolctl.scaffold.introspect import ToolDraft, describe_function, valid_name
from toolctl.scaffold.render import SCHEMA_FILE, handler_module, tool_file
from toolctl.yamlsrc import real_path


@dataclass
class Plan:
    """Files to create (path → text), and the draft they declare."""

    files: dict[Path, str] = field(default_factory=dict)
    draft: ToolDraft | None = None
    handler: str = ""
    notes: list[str] = field(default_factory=list)


def module_name(tool_name: str) -> str:
    """The handler module's name for a tool: ``<name>_tool`` as a Python identifier."""
    return re.sub(r"\W", "_", tool_name).lstrip("0123456789") + "_tool"


def plan_from_function(
    ref: str,
    project: Project,
    *,
    output: Path | None = None,
    name: str | None = None,
    handler_dir: Path | None = None,
    annotations: dict[str, bool] | None = None,
) -> Plan:
    """The files that declare the function ``ref`` (``module:function``) in ``project``.

    Imports the function's module, so it runs that module's top-level code. ``annotations``
    (MCP's ``readOnlyHint``, ``destructiveHint``, ...) are what the caller knows about the
    function's effects: a signature cannot tell.
    """
    from toolctl.loader import skipped_file
    from toolctl.references import load_object, parse

    if name is not None and not valid_name(name):  # it names the files written, too
        raise UsageError(
            f"--name {name!r} is not a valid tool name",
            hint="use letters, digits, '_', '.' and '-' (at most 128)",
        )
    if name is not None and output is None and skipped_file(f"{name}.yaml") is not None:
        raise UsageError(
            f"--name {name!r} would write {name}.yaml, which toolctl does not load: "
            f"{skipped_file(f'{name}.yaml')}",
            hint=f"choose another name, e.g. --name {_loadable(name)}",
        )
    try:
        target = parse(ref)
        fn = load_object(ref, project.python_path)
    except ToolctlError as exc:
        raise UsageError(
            f"cannot import {ref}: {exc.message}", hint=_import_hint(exc, ref, project)
        ) from None
    if not callable(fn) or isinstance(fn, type):
        raise UsageError(f"{ref} is not a function", hint="give module:function")
    if _needs_instance(fn):
        raise UsageError(
            f"{ref} is a method: calling it needs an instance",
            hint="give a module-level function, a staticmethod or a classmethod",
        )
    draft = describe_function(fn, name=name)
    tool_path = output or _tools_dir(project) / f"{draft.name}.yaml"
    _check_loaded(tool_path, project)
    _check_name_free(draft.name, tool_path, project)
    module = module_name(draft.name)
    directory = handler_dir or (project.python_path[0] if project.python_path else project.root)
    handler = f"{module}:handler"
    schema = project.root / SCHEMA_FILE
    schema_ref = (
        Path(os.path.relpath(schema, real_path(tool_path.parent))).as_posix()
        if schema.is_file()
        else None
    )
    plan = Plan(draft=draft, handler=handler)
    if real_path(directory) not in [real_path(p) for p in project.python_path]:
        plan.notes.append(
            f"{_shown(real_path(directory), project.root)} is not on pythonPath: add it in "
            f"{CONFIG_NAME}, or {handler} will not resolve"
        )
    plan.files[tool_path] = tool_file(
        draft, handler, schema_ref=schema_ref, source=ref, annotations=annotations
    )
    plan.files[directory / f"{module}.py"] = handler_module(
        target.module, target.attr, tool_path.name
    )
    return plan


def _needs_instance(fn: object) -> bool:
    """A plain function defined in a class body and reached through the class."""
    if inspect.ismethod(fn) or not inspect.isfunction(fn) or "." not in fn.__qualname__:
        return False
    first = next(iter(inspect.signature(fn).parameters), None)
    return first == "self" and "<locals>" not in fn.__qualname__.rsplit(".", 1)[0]


def _import_hint(exc: ToolctlError, ref: str, project: Project) -> str:
    """How to fix a reference that did not import: where it was looked for, or, when the
    module was found and its own code failed, to fix that code."""
    cause = exc.__cause__
    missing = cause.name if isinstance(cause, ModuleNotFoundError) else None
    module = ref.partition(":")[0]
    if cause is None or (missing and (module == missing or module.startswith(missing + "."))):
        searched = ", ".join(_shown(p, project.root) for p in project.python_path)
        return (
            f"give module:function importable from pythonPath ({searched}) "
            "or the installed packages"
        )
    if missing is not None and exc.hint:
        return exc.hint  # a module it imports is not installed
    return "fix the module: toolctl new imports it to read the function's signature"


_FILE_SUFFIXES = (".yaml", ".yml", ".json")


def _check_name_free(name: str, tool_path: Path, project: Project) -> None:
    """Refuse a name that another file of the registry (or a pack) declares already."""
    from toolctl.loader import load_registry

    spec = load_registry(project=project).tools.get(name)
    if spec is not None and real_path(Path(spec.location.file)) != real_path(tool_path):
        raise UsageError(
            f"a tool named {name!r} exists already: {spec.location}",
            hint="choose another name with --name",
        )


def _loadable(name: str) -> str:
    """``name`` made into one whose tool file the loader reads (for a hint)."""
    stem = name.lstrip(".")
    for suffix in (".schema",):
        stem = stem.removesuffix(suffix)
    return stem or "my_tool"


def _check_loaded(tool_path: Path, project: Project) -> None:
    """Refuse to write a tool file that the project's loader would skip: a hidden file, a
    schema-named file, another suffix, or a file under a ``_``/``.`` directory of the tools
    path."""
    from toolctl.loader import skipped_directory, skipped_file

    problem = skipped_file(tool_path.name)
    target = real_path(tool_path.parent) / tool_path.name
    for root in project.tool_paths:
        root = real_path(root)
        if problem is None and root in target.parents:
            skipped = [skipped_directory(p) for p in target.relative_to(root).parts[:-1]]
            problem = next((p for p in skipped if p is not None), None)
    if problem is not None:
        raise UsageError(
            f"{tool_path} would not be loaded: {problem}",
            hint="write it where toolctl loads tools: another --output or --name",
        )


def _tools_dir(project: Project) -> Path:
    for path in project.tool_paths:
        if path.is_dir() or (not path.exists() and path.suffix not in _FILE_SUFFIXES):
            return path
    raise UsageError(
        "the project's tools path is a file, not a directory",
        hint="say where to write the tool file with --output",
    )


def _shown(path: Path, root: Path) -> str:
    try:
        return path.relative_to(root).as_posix() or "."
    except ValueError:
        return str(path)


def dangling_link(path: Path) -> Path | None:
    """The first of ``path`` and its parents that is a symbolic link to nothing, or None.

    Writing there would create the link's target, wherever it points (outside the project,
    into another user's directory): the scaffolding commands refuse instead."""
    for candidate in (path, *path.parents):
        if candidate.is_symlink() and _missing_target(candidate):
            return candidate
    return None


def _missing_target(link: Path) -> bool:
    """Whether following ``link`` ends at nothing (a loop is not that: no write gets through
    one, and writing reports it)."""
    try:
        os.stat(link)
    except FileNotFoundError:
        return True
    except OSError:
        return False
    return False


def refuse_dangling(paths: list[Path]) -> None:
    """A :class:`UsageError` naming the first dangling symbolic link among ``paths`` (or
    their directories), before anything is written."""
    for path in paths:
        link = dangling_link(path)
        if link is not None:
            raise UsageError(
                f"{link} is a symbolic link to {os.readlink(link)}, which does not exist; "
                "not writing through it",
                hint=f"remove the link (rm {link}) and run again",
            )


def write_files(files: dict[Path, str], *, force: bool = False) -> list[Path]:
    """Write every file (creating directories), or none when any exists and not ``force``.

    A file that cannot be written (a read-only directory, a file where a directory must be) is
    a :class:`UsageError`; without ``force`` the files written before it are removed again.
    A dangling symbolic link among the paths or their directories is refused up front.
    """
    refuse_dangling(list(files))
    existing = [p for p in files if p.exists()]
    if existing and not force:
        names = ", ".join(str(p) for p in existing)
        raise UsageError(
            f"refusing to overwrite {names}",
            hint="move them away, choose other paths, or pass --force",
        )
    written: list[Path] = []
    for path, text in files.items():
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            with path.open("w" if force else "x", encoding="utf-8") as out:  # "x": no clobbering
                out.write(text)
        except OSError as exc:
            for done in [] if force else written:
                done.unlink(missing_ok=True)
            raise UsageError(
                f"cannot write {path}: {exc.strerror or exc}",
                hint="check that the directory is writable and that no file stands where a "
                "directory is needed",
            ) from None
        written.append(path)
        # The import of the function put the (maybe then missing) handler directory on
        # sys.path; forget what the import system cached about it, so this process sees the
        # new module too.
        sys.path_importer_cache.pop(str(path.parent), None)
    importlib.invalidate_caches()
    return written
