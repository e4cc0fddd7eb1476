"""Which files a ``$ref`` may name: :class:`RefScope` (see :mod:`toolctl.refs` for why).

Kept apart from the bundler so the loader can build a scope on every load, the warm ones
included, without importing the bundler and its dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path, PurePath

# a file named so is a schema file wherever it is in the project (and no tool file)
from toolctl.discovery import SCHEMA_SUFFIXES as SCHEMA_SUFFIXES

_DIR_SUFFIXES = (".yaml", ".yml", ".json")  # files a `schemas:` directory lends its status to
# Never a schema, wherever it is and whatever `schemas:` says: the configuration, the lock, the
# run history and its keys (a password in `state:`, the approval key).
_NEVER_NAMES = frozenset({"toolctl.yaml", "toolctl.yml", "pyproject.toml", "toolctl.lock"})
_NEVER_SUFFIXES = (".key", ".lock", ".db", ".db-wal", ".db-shm", ".db-journal", ".sqlite")
ALLOWED = (
    "only schema files inside the project may be referenced (files named *.schema.yaml, "
    "*.schema.yml or *.schema.json, or YAML/JSON files in a directory listed under `schemas:` "
    "in toolctl.yaml; never config, lock, state, key or dot-files)"
)


@dataclass(frozen=True)
class RefScope:
    """Which files a ``$ref`` may name: schema files inside ``root`` (see :mod:`toolctl.refs`).

    ``root``, ``schema_dirs`` and ``protected`` are real paths (symlinks resolved);
    ``schema_dirs`` lie inside ``root`` (the configuration checks that). ``protected`` names
    files that are never schemas whatever they are called (the configured run history).
    """

    root: Path
    schema_dirs: tuple[Path, ...] = ()
    protected: frozenset[Path] = frozenset()  # the project's config and run history files

    @property
    def key(self) -> str:
        """A text that changes when the scope does (the load cache compares it)."""
        return "\n".join(map(str, (self.root, *self.schema_dirs)))

    def refusal(self, path: Path) -> tuple[str, str] | None:
        """(message, hint) when ``path`` (a real path) may not be referenced; None when it may."""
        if path == self.root or self.root not in path.parents:
            return "leaves the project", "keep shared schemas inside the project"
        rel = path.relative_to(self.root)
        name = path.name.lower()
        if any(part.startswith(".") for part in rel.parts):
            return (
                "is a dot-file or inside a dot-directory (.git, .toolctl, ...)",
                "move the schema to a visible directory of the project",
            )
        if name in _NEVER_NAMES or name.endswith(_NEVER_SUFFIXES) or path in self.protected:
            return (
                "is configuration, a lock, a run history or a key, never a schema",
                "move the schema it should name into a *.schema.yaml file",
            )
        if name.endswith(SCHEMA_SUFFIXES):
            return None
        if name.endswith(_DIR_SUFFIXES) and any(d in path.parents for d in self.schema_dirs):
            return None
        return (
            "is not a schema file",
            f"rename it to {_schema_name(rel)} or add its directory to `schemas:` in toolctl.yaml",
        )


def _schema_name(rel: PurePath) -> str:
    """``rel`` renamed as a schema file: ``common.yaml`` → ``common.schema.yaml``."""
    suffix = rel.suffix.lower()
    if suffix in _DIR_SUFFIXES:
        return str(rel.with_suffix(f".schema{suffix}"))
    return f"{rel}.schema.yaml"


__all__ = ["ALLOWED", "SCHEMA_SUFFIXES", "RefScope"]
