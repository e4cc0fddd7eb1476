"""Finding and reading the project configuration (``toolctl.yaml`` or ``[tool.toolctl]``).

Keys (all optional): ``tools`` (a path or list of paths to tool files or directories; default
``tools.d``), ``pythonPath`` (directories searched for handler modules; default ``.``),
``state`` (the run-history database; default ``.toolctl/state.db``), and free sections for the
commands (``lint``, ``export``, ``test``, ``serve``). Paths are relative to the config file.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolctl.errors import ConfigError, YamlError
from toolctl.yamlsrc import load_file, real_path

CONFIG_NAME = "toolctl.yaml"
STATE_ENV = "TOOLCTL_STATE"  # overrides ``state:``; the place for a URL with a password
KNOWN_KEYS = {"tools", "pythonPath", "state", "lint", "export", "test", "serve", "run"}


@dataclass
class Project:
    """Where a registry lives and how to treat it."""

    root: Path
    config_file: Path | None = None
    tool_paths: list[Path] = field(default_factory=list)
    python_path: list[Path] = field(default_factory=list)
    state_path: Path = Path(".toolctl/state.db")
    settings: dict[str, Any] = field(default_factory=dict)
    state_url: str | None = None  # a PostgreSQL ``state:`` (or TOOLCTL_STATE); else state_path

    def section(self, name: str) -> dict[str, Any]:
        """A command's settings section (``lint``, ``export``, ...), empty when absent."""
        value = self.settings.get(name, {})
        return value if isinstance(value, dict) else {}


def _read_pyproject(path: Path) -> dict[str, Any] | None:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        data = tomllib.loads(path.read_text("utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    section = data.get("tool", {}).get("toolctl")
    return section if isinstance(section, dict) else None


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest config at or above ``start``: (file, settings), or None."""
    start = real_path(start)
    for directory in (start, *start.parents):
        candidate = directory / CONFIG_NAME
        if candidate.is_file():
            try:
                doc = load_file(candidate)
            except YamlError as exc:
                raise ConfigError(
                    f"{candidate}:{exc.line}:{exc.col}: {exc.message}", hint=exc.hint
                ) from None
            data = doc.data if doc.data is not None else {}
            if not isinstance(data, dict):
                raise ConfigError(f"{candidate}: the configuration must be a mapping")
            return candidate, data
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            section = _read_pyproject(pyproject)
            if section is not None:
                return pyproject, section
    return None


def _paths(value: Any, base: Path, key: str, origin: Path | None) -> list[Path]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise ConfigError(f"{origin}: {key!r} must be a path or a list of paths")
    return [real_path(base / v) for v in items]


def project_for(path: Path | None = None) -> Project:
    """The project for ``path``: a tools file/dir given explicitly, or found from the cwd.

    A ``path`` is the tools path itself (its ``toolctl.yaml``, found at or above it, gives the
    other settings); to load the project whose root is a directory, use :func:`project_at`.
    """
    start = Path.cwd() if path is None else Path(path)
    tools = None if path is None else [Path(path)]
    return _project(start if start.is_dir() else start.parent, tools)


def project_at(root: str | Path, *, tools: list[str | Path] | None = None) -> Project:
    """The project rooted at directory ``root``: its config (found at or above ``root``, as
    from a working directory) with the config's ``tools:`` paths, or ``tools`` instead."""
    directory = Path(root)
    if not directory.is_dir():
        raise ConfigError(
            f"{directory}: not a directory", hint="give the project root, where toolctl.yaml is"
        )
    return _project(directory, None if tools is None else [Path(t) for t in tools])


def _project(start: Path, tools: list[Path] | None) -> Project:
    found = find_config(start)
    if found is None:
        root = start
        settings: dict[str, Any] = {}
        config_file = None
    else:
        config_file, settings = found
        root = config_file.parent
    unknown = sorted(k for k in settings if k not in KNOWN_KEYS and not k.startswith("x-"))
    if unknown:
        raise ConfigError(
            f"{config_file}: unknown setting(s) {', '.join(unknown)}",
            hint=f"known settings: {', '.join(sorted(KNOWN_KEYS))}",
        )
    root = real_path(root)
    if tools is not None:
        tool_paths = [real_path(t) for t in tools]
    elif "tools" in settings:
        tool_paths = _paths(settings["tools"], root, "tools", config_file)
    else:
        tool_paths = [root / "tools.d"]
    python_path = _paths(settings.get("pythonPath", ["."]), root, "pythonPath", config_file)
    state = settings.get("state", ".toolctl/state.db")
    env = os.environ.get(STATE_ENV)
    if env:  # a path in the variable is relative to the working directory, as on a command line
        is_url = env.startswith(("postgresql://", "postgres://"))
        state = env if is_url else str(Path(env).resolve())
    if not isinstance(state, str):
        raise ConfigError(
            f"{config_file}: 'state' must be a path or a postgresql:// URL",
            hint=f"or set {STATE_ENV}, which keeps a database password out of the file",
        )
    if state.startswith(("postgresql://", "postgres://")):
        default = root / ".toolctl" / "state.db"
        return Project(root, config_file, tool_paths, python_path, default, settings, state)
    return Project(root, config_file, tool_paths, python_path, (root / state), settings)
