"""Which tool files a registry holds: the walk of a tools path that every load makes, without
loading anything.

Kept apart from :mod:`toolctl.loader` so that what only needs the list of tool files (a warm
``toolctl search`` checking its kept index, see :mod:`toolctl.search.store`) imports neither the
loader nor the checks it pulls in.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from toolctl.yamlsrc import real_path

if TYPE_CHECKING:
    from toolctl.config import Project
    from toolctl.diagnostics import Diagnostic

TOOL_SUFFIXES = (".yaml", ".yml")
SCHEMA_SUFFIXES = (".schema.yaml", ".schema.yml", ".schema.json")
"""A file named so is a schema file wherever it is in the project (:mod:`toolctl.refscope`),
not a tool file."""


def display_path(path: Path) -> str:
    """``path`` relative to the working directory when it is below it."""
    try:
        return os.path.relpath(path)
    except ValueError:  # pragma: no cover - other drive on Windows
        return str(path)


def short(path: Path) -> str:
    """How messages name ``path``: relative when below the working directory, else absolute."""
    # Once per tool file of a load: split the path's own text (pathlib keeps it, and reading
    # the file needs it anyway) rather than make a ``path.parent`` and format it, which was
    # most of this function's time. The text is pathlib's normalised form, so its directory
    # part is ``str(path.parent)`` (empty for a bare name, whose parent is ".").
    text = str(path)
    name = os.path.basename(text)
    if name not in ("", ".", ".."):  # per directory, not per file: relpath is slow
        parent = _short_dir(os.getcwd(), os.path.dirname(text) or ".")
        if not parent.startswith(".."):
            return name if parent == "." else os.path.join(parent, name)
    rel = display_path(path)
    return rel if not rel.startswith("..") else text


@functools.lru_cache(maxsize=256)
def _short_dir(cwd: str, directory: str) -> str:
    try:
        return os.path.relpath(directory, cwd)
    except ValueError:  # pragma: no cover - other drive on Windows
        return directory


def discover(tool_path: Path) -> Iterator[tuple[Path, Diagnostic | None]]:
    """Tool files under ``tool_path`` (sorted), or a diagnostic for each refused entry."""
    if tool_path.is_file() or (tool_path.is_symlink() and not tool_path.exists()):
        yield tool_path, None  # a looping or dangling link: reading it says which
        return
    if not tool_path.is_dir():
        hint = "start a project here with toolctl init, create tools.d/, or set `tools:` in "
        yield tool_path, _refused(tool_path, "tools path not found", hint + "toolctl.yaml")
        return
    root = real_path(tool_path)
    for entry in _tool_entries(tool_path):
        if isinstance(entry, tuple):
            yield entry[0], _unlistable(*entry)
            continue
        path = Path(entry.path)
        if entry.is_symlink() and root not in real_path(path).parents:
            message, hint = "symlink points outside the tools directory", "copy the file into "
            yield path, _refused(path, message, hint + "the registry instead")
            continue
        yield path, None


def _unlistable(directory: Path, exc: OSError) -> Diagnostic:
    """The diagnostic for a directory of the tools tree that cannot be listed."""
    message = f"cannot list directory: {exc.strerror or exc}"
    return _refused(
        directory, message, "make it readable (chmod u+rx), or move it out of the tools path"
    )


def _refused(path: Path, message: str, hint: str) -> Diagnostic:
    """TC110 at ``path``. The diagnostics module is imported only here: listing a tools path
    that holds no problem (a warm search checking its index) does without it."""
    from toolctl.diagnostics import Location, error

    return error(Location(short(path)), "TC110", message, hint=hint)


def skipped_file(name: str) -> str | None:
    """Why the loader skips a file named ``name`` in a tools directory, or None if it reads it."""
    if name.startswith("."):
        return "hidden files (names starting with '.') are skipped"
    if name.endswith(SCHEMA_SUFFIXES):
        return f"files named *{'/*'.join(SCHEMA_SUFFIXES)} are schemas, not tools"
    if not name.endswith(TOOL_SUFFIXES):
        return f"only {' and '.join(TOOL_SUFFIXES)} files are tool files"
    return None


def skipped_directory(name: str) -> str | None:
    """Why the loader skips a subdirectory named ``name`` of a tools directory, or None."""
    if name.startswith((".", "_")):
        return "directories whose names start with '.' or '_' are skipped"
    return None


def _tool_entries(directory: Path) -> Iterator[os.DirEntry[str] | tuple[Path, OSError]]:
    """Tool-file entries below ``directory``: sorted, a directory's files before its subdirectories.

    Hidden entries (editor locks such as Emacs ``.#t.yaml`` links too) and ``_``/``.``
    directories are skipped; symlinked directories are not followed. ``os.scandir`` gives the
    file type without one more system call per file. A directory that cannot be listed is
    yielded as ``(directory, error)`` and the walk goes on. The walk keeps its own stack (no
    recursion), so a tree nested thousands of levels deep cannot exhaust Python's.
    """
    pending = [directory]  # directories still to list, the next one last
    while pending:
        current = pending.pop()
        try:
            with os.scandir(current) as listing:
                entries = sorted(listing, key=lambda e: e.name)
        except OSError as exc:
            yield current, exc
            continue
        subdirs: list[Path] = []
        for entry in entries:
            if entry.name.startswith("."):  # before the type check: editor locks may dangle
                continue
            if entry.is_dir(follow_symlinks=False):
                if skipped_directory(entry.name) is None:
                    subdirs.append(Path(entry.path))
            elif skipped_file(entry.name) is None:
                yield entry
        pending.extend(reversed(subdirs))  # depth first, in name order


def source_files(project: Project, pack_dirs: Sequence[Path] = ()) -> list[Path]:
    """Every tool file a load of ``project`` with packs in ``pack_dirs`` (see
    :func:`pack_directories`) reads, found as a load finds them; nothing is parsed. What
    ``toolctl search`` stats to tell whether its kept index still holds."""
    paths = [*project.tool_paths, *pack_dirs]
    return [file for path in paths for file, _ in discover(path)]
