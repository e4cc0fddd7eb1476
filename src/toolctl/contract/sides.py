"""The two sides of a diff: a lock file, a directory, or a git ref read without checking out.

A git ref is read with ``git ls-tree`` and ``git cat-file`` (never ``checkout``): the project's
YAML, JSON, TOML and Python files at that commit are written to a temporary directory and loaded
like any registry, which never imports user code. Locations are mapped back to the working tree's
paths, so findings point at files a reviewer can open.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from toolctl.contract.lockfile import LOCK_NAME, read
from toolctl.contract.model import LockEntry
from toolctl.diagnostics import Location
from toolctl.errors import DeclarationError, UsageError

if TYPE_CHECKING:
    from subprocess import CompletedProcess

    from toolctl.config import Project
    from toolctl.registry import Registry
    from toolctl.spec import ToolSpec

_GIT_SUFFIXES = (".yaml", ".yml", ".json", ".toml", ".py")
_MAX_BLOB = 4 * 1024 * 1024


@dataclass
class Side:
    """One side of a diff: its entries by name, and the loaded tools when it came from files."""

    label: str
    entries: dict[str, LockEntry]
    specs: dict[str, ToolSpec] = field(default_factory=dict)
    rebase: tuple[str, str] | None = None  # (temporary prefix, the working tree's prefix)

    def locate(self, name: str, path: tuple[str | int, ...]) -> Location | None:
        """Where ``path`` of tool ``name`` is written on this side, when it came from files."""
        spec = self.specs.get(name)
        if spec is None:
            return None
        loc = spec.locate(*path)
        absolute = os.path.abspath(loc.file) if loc.file else ""
        if self.rebase and absolute.startswith(self.rebase[0]):
            rel = absolute[len(self.rebase[0]) :].lstrip("/\\")
            loc = Location(os.path.relpath(os.path.join(self.rebase[1], rel)), loc.line, loc.col)
        return loc


def entries_of(registry: Registry) -> dict[str, LockEntry]:
    """The lock entries of a registry's enabled tools."""
    return {s.name: LockEntry.of(s) for s in registry.tools.values() if s.enabled}


def registry_side(registry: Registry, label: str) -> Side:
    """A side from a loaded registry; :class:`DeclarationError` when it has errors."""
    if not registry.ok:
        errors = [d for d in registry.diagnostics if d.severity.value == "error"]
        raise DeclarationError(
            f"{label}: the registry has {len(errors)} error(s); its contracts are not complete",
            hint="fix them first (toolctl validate)",
            diagnostics=registry.diagnostics,
        )
    specs = {s.name: s for s in registry.tools.values() if s.enabled}
    return Side(label, entries_of(registry), specs)


def lock_side(path: Path) -> Side:
    """A side from a lock file."""
    from toolctl.loader import display_path

    return Side(display_path(path), read(path))


def lock_path(project: Project) -> Path:
    """Where the project's lock file lives: ``toolctl.lock`` at the project root."""
    return project.root / LOCK_NAME


def resolve(spec: str, project: Project, *, packs: bool = True) -> Side:
    """The side a ``BASE``/``HEAD`` argument names: lock file, directory, tool file or git ref."""
    from toolctl.config import find_project
    from toolctl.loader import load_registry

    path = Path(spec)
    if path.is_dir() or (path.is_file() and path.suffix in (".yaml", ".yml")):
        return registry_side(load_registry(project=find_project(path), packs=packs), spec)
    if path.is_file():
        return lock_side(path)
    return git_side(spec, project, packs=packs)


# -- git ----------------------------------------------------------------------------------


def _run_git(args: list[str], cwd: Path, stdin: bytes | None = None) -> CompletedProcess[bytes]:
    try:
        return subprocess.run(
            ["git", *args], cwd=cwd, input=stdin, capture_output=True, check=False
        )
    except FileNotFoundError:
        raise UsageError("git is not installed", hint="install git to diff git refs") from None


def _git(args: list[str], cwd: Path, stdin: bytes | None = None) -> bytes:
    done = _run_git(args, cwd, stdin)
    if done.returncode != 0:
        raise UsageError(
            f"git {args[0]} failed: {done.stderr.decode('utf-8', 'replace').strip()}",
            hint="give a lock file, a directory or a git ref (branch, tag or commit)",
        )
    return done.stdout


def _ref_exists(ref: str, cwd: Path) -> bool:
    return _run_git(["rev-parse", "--verify", "--quiet", f"{ref}^{{commit}}"], cwd).returncode == 0


def _blobs(ref: str, top: Path, prefix: str) -> list[tuple[str, str]]:
    """(object id, path below ``prefix``) of the files worth extracting at ``ref``."""
    listing = _git(["ls-tree", "-r", "-z", "-l", "--full-tree", ref, "--", prefix or "."], top)
    out = []
    for item in listing.split(b"\0"):
        if not item:
            continue
        meta, _, name = item.decode("utf-8", "surrogateescape").partition("\t")
        mode, kind, oid, size = meta.split()
        if kind != "blob" or mode not in ("100644", "100755") or int(size) > _MAX_BLOB:
            continue
        rel = name[len(prefix) :] if prefix else name
        parts = PurePosixPath(rel).parts
        if (
            not rel.endswith(_GIT_SUFFIXES)
            or ".." in parts
            or any(p.startswith(".") for p in parts)
        ):
            continue
        out.append((oid, rel))
    return out


def _extract(ref: str, top: Path, prefix: str, into: Path) -> None:
    blobs = _blobs(ref, top, prefix)
    if not blobs:
        return
    data = _git(["cat-file", "--batch"], top, stdin="".join(f"{o}\n" for o, _ in blobs).encode())
    pos = 0
    for _, rel in blobs:
        header_end = data.index(b"\n", pos)
        size = int(data[pos:header_end].split()[2])
        body = data[header_end + 1 : header_end + 1 + size]
        pos = header_end + 1 + size + 1
        target = into.joinpath(*PurePosixPath(rel).parts)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(body)


def git_side(ref: str, project: Project, *, packs: bool = True) -> Side:
    """The registry of ``project`` as it was at git ``ref`` (read-only: nothing checked out)."""
    from toolctl.config import project_at
    from toolctl.loader import load_registry

    root = project.root
    if not _ref_exists(ref, root):
        if _run_git(["rev-parse", "--git-dir"], root).returncode != 0:
            raise UsageError(
                f"{ref!r} is not a lock file or a directory, and {root} is not in a git "
                "repository, so it cannot be a git ref",
                hint="give a lock file or a directory (e.g. toolctl diff old.lock), or run "
                "toolctl diff inside a git checkout (git init) to compare git refs",
            )
        raise UsageError(
            f"{ref!r} is not a lock file, a directory or a git ref",
            hint="give a path that exists, or a branch, tag or commit of this repository",
        )
    top = Path(_git(["rev-parse", "--show-toplevel"], root).decode().strip())
    prefix = os.path.relpath(root.resolve(), top.resolve()).replace(os.sep, "/")
    prefix = "" if prefix == "." else prefix + "/"
    with tempfile.TemporaryDirectory(prefix="toolctl-diff-") as tmp:
        base = Path(tmp).resolve()
        _extract(ref, top, prefix, base)
        at_ref = project_at(base)
        # Handler references are checked statically (never imported); modules outside the
        # extracted files (a pythonPath above the project) resolve against the working tree's.
        at_ref.python_path += [p for p in project.python_path if p not in at_ref.python_path]
        registry = load_registry(project=at_ref, packs=packs)
        side = registry_side(registry, f"git:{ref}")
        side.rebase = (str(base), str(root))
        if registry.project is not None:  # no handle on the deleted directory survives
            registry.project = None
    return side
