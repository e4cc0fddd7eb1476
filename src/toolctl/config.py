"""Finding and reading the project configuration (``toolctl.yaml`` or ``[tool.toolctl]``).

Keys (all optional): ``tools`` (a path or list of paths to tool files or directories; default
``tools.d``), ``pythonPath`` (directories searched for handler modules; default ``.``),
``state`` (the run-history database; default ``.toolctl/state.db``), ``schemas`` (directories
inside the project whose YAML and JSON files a ``$ref`` may name besides ``*.schema.yaml``
files), ``toolsets`` (named groups of tools and their loading; see :mod:`toolctl.catalog`),
and free sections for the commands (``lint``, ``export``, ``test``, ``serve``). Paths are
relative to the config file.

The project root is found from a path upward, as git finds a repository: the nearest directory at
or above it holding ``toolctl.yaml`` or a ``pyproject.toml`` with a ``[tool.toolctl]`` table. With
neither: the directory holding ``tools.d`` when the path is or is inside a ``tools.d`` directory;
the working directory when the path is the working directory; else the directory holding the
path. So handler modules next to ``tools.d`` resolve and the run history is not written into the
tools directory.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from toolctl.budget import DEFAULT_BUDGET_MS
from toolctl.errors import ConfigError, YamlError
from toolctl.yamlsrc import MAX_DEPTH, decode_text, load_file, loads, read_bytes, real_path

CONFIG_NAME = "toolctl.yaml"
STATE_ENV = "TOOLCTL_STATE"  # overrides ``state:``; the place for a URL with a password
TOOLS_DIR = "tools.d"
KNOWN_KEYS = {
    "tools",
    "pythonPath",
    "state",
    "schemas",
    "toolsets",
    "lint",
    "export",
    "test",
    "serve",
    "run",
    "limits",
    "auth",
}
_STATE_URL = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")
POSTGRES_URLS = ("postgresql://", "postgres://")  # a ``state`` naming a PostgreSQL database


def check_state(state: str, origin: str | Callable[[], str]) -> None:
    """A :class:`ConfigError` when ``state`` is a URL toolctl cannot store runs in (``mysql://``,
    ``sqlite://``): taken for a file name it would silently create a ``mysql:`` directory.
    ``origin`` names where ``state`` came from (a callable: worked out only for the error)."""
    match = _STATE_URL.match(state)
    if match and not state.startswith(POSTGRES_URLS):
        where = origin if isinstance(origin, str) else origin()
        raise ConfigError(
            f"{where}: {match.group(1)}:// is not a run history toolctl can use",
            hint="give an SQLite file path or a postgresql:// URL",
        )


DEFAULT_MEMORY_LIMIT_MB = 1024
MIB = 1024 * 1024
# RLIMIT_AS is a signed 64-bit byte count: more MiB than this cannot be set at all
MAX_MEMORY_LIMIT_MB = (2**63 - 1) // MIB


def memory_limit_mb(settings: dict[str, Any], origin: Callable[[], str]) -> int | None:
    """``run.memoryLimitMb`` of ``settings`` (the default when absent; None: no limit), or a
    :class:`ConfigError` at ``origin()`` (worked out only for the error) naming the fix."""
    section = settings.get("run") or {}
    if not isinstance(section, dict):
        raise ConfigError(
            f"{origin()}: run must be a mapping, not {type(section).__name__}",
            hint="write it as run: {memoryLimitMb: 1024}",
        )
    value = section.get("memoryLimitMb", DEFAULT_MEMORY_LIMIT_MB)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(
            f"{origin()}: run.memoryLimitMb must be a positive whole number of MiB, not {value!r}",
            hint="e.g. run: {memoryLimitMb: 1024}, or null for no memory limit",
        )
    if value > MAX_MEMORY_LIMIT_MB:
        raise ConfigError(
            f"{origin()}: run.memoryLimitMb {value} is more than any process can be given "
            f"(at most {MAX_MEMORY_LIMIT_MB})",
            hint="give the limit in MiB, e.g. run: {memoryLimitMb: 1024}, or null for no limit",
        )
    return value


def validation_budget_ms(settings: dict[str, Any], origin: Callable[[], str]) -> int:
    """``run.validationBudgetMs`` of ``settings`` (the default when absent), or a
    :class:`ConfigError` at ``origin()`` naming the fix. Call after :func:`memory_limit_mb`,
    which checks that ``run`` is a mapping."""
    value = (settings.get("run") or {}).get("validationBudgetMs", DEFAULT_BUDGET_MS)
    # at most a day: a larger number is a typo (and a float of it would lose precision)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 86_400_000:
        raise ConfigError(
            f"{origin()}: run.validationBudgetMs must be a positive whole number of "
            f"milliseconds, not {value!r}",
            hint=f"e.g. run: {{validationBudgetMs: {DEFAULT_BUDGET_MS}}}",
        )
    return value


DEFAULT_APPROVAL_TTL_S = 7 * 86_400
_DURATION = re.compile(r"^([1-9][0-9]{0,8})([smhd])$")
_UNIT_S = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


def approval_ttl(settings: dict[str, Any], origin: Callable[[], str]) -> float:
    """``run.approvalTtl`` of ``settings`` in seconds (7 days when absent): how long a run may
    wait for approval or a resume before a sweep ends it. A whole number of seconds or a
    duration such as ``"7d"``, ``"12h"``, ``"30m"``; anything else is a :class:`ConfigError` at
    ``origin()``. Call after :func:`memory_limit_mb`, which checks that ``run`` is a mapping."""
    value = (settings.get("run") or {}).get("approvalTtl", DEFAULT_APPROVAL_TTL_S)
    if isinstance(value, int) and not isinstance(value, bool) and 1 <= value <= 10**10:
        return float(value)
    match = _DURATION.match(value) if isinstance(value, str) else None
    if match is None:
        raise ConfigError(
            f"{origin()}: run.approvalTtl must be a positive duration such as 7d, 12h or 30m "
            f"(or a whole number of seconds), not {value!r}",
            hint="e.g. run: {approvalTtl: 7d}",
        )
    return float(int(match.group(1)) * _UNIT_S[match.group(2)])


def calls_per_minute(settings: dict[str, Any], origin: Callable[[], str]) -> int | None:
    """``limits.callsPerMinute`` of ``settings``: the rate limit of every tool that declares
    none of its own (None: no limit), or a :class:`ConfigError` at ``origin()``."""
    section = settings.get("limits")
    if section is None:
        return None
    if not isinstance(section, dict) or set(section) - {"callsPerMinute"}:
        raise ConfigError(
            f"{origin()}: limits must be a mapping with callsPerMinute, not {section!r}",
            hint="e.g. limits: {callsPerMinute: 60}",
        )
    value = section.get("callsPerMinute")
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= 10**9:
        raise ConfigError(
            f"{origin()}: limits.callsPerMinute must be a positive whole number, not {value!r}",
            hint="e.g. limits: {callsPerMinute: 60} (per caller and tool)",
        )
    return value


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
    schema_dirs: list[Path] = field(default_factory=list)  # ``schemas:`` (see toolctl.refs)

    def section(self, name: str) -> dict[str, Any]:
        """A command's settings section (``lint``, ``export``, ...), empty when absent."""
        value = self.settings.get(name, {})
        return value if isinstance(value, dict) else {}


def _check_keys(settings: dict[str, Any], where: Callable[[str], str]) -> None:
    """An unknown setting is an error at its line, with the nearest known key suggested."""
    unknown = [k for k in settings if k not in KNOWN_KEYS and not str(k).startswith("x-")]
    if not unknown:
        return
    guesses = []
    for key in unknown:
        import difflib  # only for a typo: every command reads this module

        near = difflib.get_close_matches(str(key), sorted(KNOWN_KEYS), n=1)
        if near:
            guesses.append(f"{near[0]!r} for {key!r}" if len(unknown) > 1 else f"{near[0]!r}")
    hint = f"did you mean {', '.join(guesses)}? " if guesses else ""
    raise ConfigError(
        f"{where(str(unknown[0]))}: unknown setting(s) {', '.join(map(str, unknown))}",
        hint=f"{hint}known settings: {', '.join(sorted(KNOWN_KEYS))}",
    )


def _shown(path: Path) -> str:
    """``path`` relative to the working directory when it is below it (as diagnostics show)."""
    try:
        return str(real_path(path).relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def _yaml_locator(file: Path, doc: Any) -> Callable[[str], str]:
    """``file:line:col`` of a top-level key of a loaded YAML config."""

    def where(key: str) -> str:
        line, col = doc.locate((key,), key=True)
        return f"{_shown(file)}:{line}:{col}"

    return where


def _setting_at(config_file: Path | None, key: str) -> str:
    """``file:line:col`` of the top-level setting ``key`` (read again: only for an error)."""
    if config_file is None:
        return key
    if config_file.name == "pyproject.toml":
        return f"{_shown(config_file)}:{_toml_key_line(config_file.read_text('utf-8'), key)}:1"
    return _yaml_locator(config_file, load_file(config_file))(key)


def setting_location(config_file: Path | None, key: str) -> str:
    """``file:line:col`` of the top-level setting ``key`` of ``config_file``, for an error
    about it (the file is read again)."""
    return _setting_at(config_file, key)


def _toml_key_line(text: str, key: str) -> int:
    """The line of ``key`` in the ``[tool.toolctl]`` table of a pyproject.toml (1 if not found)."""
    table = False
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if stripped.startswith("["):
            table = stripped.strip("[] ").startswith("tool.toolctl")
            if re.fullmatch(rf"\[+\s*tool\.toolctl\.{re.escape(key)}\s*\]+", stripped):
                return number
        elif table and re.match(rf"[\"']?{re.escape(key)}[\"']?\s*=", stripped):
            return number
    return 1


# A dotted key of more parts than MAX_DEPTH is refused before tomllib sees it: tomllib's time
# is quadratic in the parts (100,000 of them: minutes), and the table it builds nests as deep.
# Tokens (per line): a quoted string (an unclosed one runs to the end of the line, so no
# quote is scanned twice), a bare word, or any other character.
_TOML_TOKENS = re.compile(r"\"(?:[^\"\\]|\\.)*(?:\"|$)|'[^']*(?:'|$)|[\w-]+|\S")
_TOO_DEEP_HINT = "flatten the nesting (toolctl reads every pyproject.toml at or above the project)"


def _deep_dotted_key(text: str) -> int | None:
    """The line of the first run ``a.b.c...`` of more than MAX_DEPTH parts, or None."""
    if text.count(".") <= MAX_DEPTH:
        return None
    for number, line in enumerate(text.splitlines(), 1):
        if line.count(".") < MAX_DEPTH:
            continue
        parts, after_dot = 0, False
        for token in _TOML_TOKENS.findall(line):
            if token == ".":
                after_dot = parts > 0 and not after_dot
                parts = parts if after_dot else 0
            elif token[0] in "\"'" or token[0].isalnum() or token[0] in "_-":
                parts = parts + 1 if after_dot else 1
                after_dot = False
                if parts > MAX_DEPTH:
                    return number
            else:
                parts, after_dot = 0, False
    return None


def _read_pyproject(path: Path) -> dict[str, Any] | None:
    """The ``[tool.toolctl]`` table of ``path``, checked; None without one.

    Any pyproject.toml at or above a project is read, so a hostile one (deeply nested arrays,
    a key of 100,000 dotted parts) ends in a :class:`ConfigError`, never a crash or a stall.
    """
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover
        import tomli as tomllib  # type: ignore[import-not-found,unused-ignore]
    try:
        text = path.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    if "toolctl" not in text:  # no [tool.toolctl] table (and nothing to parse)
        return None
    line = _deep_dotted_key(text)
    if line is not None:
        raise ConfigError(
            f"{path}:{line}:1: cannot read: a dotted key of more than {MAX_DEPTH} parts",
            hint=_TOO_DEEP_HINT,
        )
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: cannot read: {exc}") from None
    except RecursionError:  # tomllib recurses once per level of nested arrays/inline tables
        raise ConfigError(
            f"{path}:1:1: cannot read: arrays or inline tables nested too deeply",
            hint=_TOO_DEEP_HINT,
        ) from None
    tool = data.get("tool")  # not a table: then it holds no [tool.toolctl] either
    section = tool.get("toolctl") if isinstance(tool, dict) else None
    if not isinstance(section, dict):
        return None
    if _deeper_than(section, MAX_DEPTH):
        raise ConfigError(
            f"{_shown(path)}:1:1: [tool.toolctl] nests deeper than {MAX_DEPTH} levels",
            hint=_TOO_DEEP_HINT,
        )
    _check_keys(section, lambda key: f"{_shown(path)}:{_toml_key_line(text, key)}:1")
    return section


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether lists/tables in ``value`` nest deeper than ``limit`` (an explicit stack)."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        if isinstance(item, dict):
            stack.extend((inner, depth + 1) for inner in item.values())
        elif isinstance(item, list):
            stack.extend((inner, depth + 1) for inner in item)
    return False


def find_config(start: Path) -> tuple[Path, dict[str, Any]] | None:
    """The nearest config at or above ``start``: (file, settings), or None."""
    start = real_path(start)
    for directory in (start, *start.parents):
        candidate = directory / CONFIG_NAME
        if candidate.is_file():
            return candidate, _read_config(candidate)
        pyproject = directory / "pyproject.toml"
        if pyproject.is_file():
            section = _read_pyproject(pyproject)
            if section is not None:
                return pyproject, section
    return None


def _read_config(path: Path) -> dict[str, Any]:
    """The settings of a ``toolctl.yaml``, checked; remembered by the load cache while the file
    is unchanged (see :func:`toolctl.cache.remembered_settings`)."""
    from toolctl.cache import remember_settings, remembered_settings

    try:
        raw = read_bytes(path)
        settings = remembered_settings(path, raw)
        if settings is not None:
            return settings
        doc = loads(decode_text(raw), str(path))
    except YamlError as exc:
        raise ConfigError(f"{path}:{exc.line}:{exc.col}: {exc.message}", hint=exc.hint) from None
    data = doc.data if doc.data is not None else {}
    if not isinstance(data, dict):
        raise ConfigError(
            f"{_shown(path)}:1:1: the configuration must be a mapping",
            hint="write one setting per line, e.g. `tools: tools.d`",
        )
    _check_keys(data, _yaml_locator(path, doc))
    remember_settings(path, raw, data)
    return data


def _paths(value: Any, base: Path, key: str, origin: Path | None) -> list[Path]:
    items = [value] if isinstance(value, str) else value
    if not isinstance(items, list) or not all(isinstance(v, str) for v in items):
        raise ConfigError(
            f"{_setting_at(origin, key)}: {key!r} must be a path or a list of paths",
            hint="give a directory or file relative to the project root, or a list of them",
        )
    return [real_path(base / v) for v in items]


def _schema_dirs(settings: dict[str, Any], root: Path, origin: Path | None) -> list[Path]:
    """The ``schemas:`` directories: real paths strictly inside ``root``, none of them hidden
    (a ``$ref`` may name YAML and JSON files in them; see :class:`toolctl.refs.RefScope`)."""
    if "schemas" not in settings:
        return []
    dirs = _paths(settings["schemas"], root, "schemas", origin)
    for directory in dirs:
        inside = root in directory.parents
        hidden = inside and any(p.startswith(".") for p in directory.relative_to(root).parts)
        if not inside or hidden:
            what = "a hidden directory" if hidden else "not a directory below the project root"
            raise ConfigError(
                f"{_setting_at(origin, 'schemas')}: 'schemas' lists {_shown(directory)}, {what}",
                hint=f"list visible subdirectories of {_shown(root)} that hold only schemas, "
                "e.g. `schemas: [schemas]`",
            )
    return dirs


def project_for(path: Path | None = None) -> Project:
    """The project for ``path``: a tools file/dir given explicitly, or found from the cwd.

    A ``path`` is the tools path itself (its ``toolctl.yaml``, found at or above it, gives the
    other settings; see the module docstring for the root without one); to load the project
    whose root is a directory, use :func:`project_at`.
    """
    if path is None:
        return _project(Path.cwd(), None)
    start = Path(path)
    return _project(start if start.is_dir() else start.parent, [start])


def is_project_root(directory: Path) -> bool:
    """True when ``directory`` holds a project: ``toolctl.yaml``, ``[tool.toolctl]`` in its
    ``pyproject.toml``, or a ``tools.d`` directory."""
    if (directory / CONFIG_NAME).is_file() or (directory / TOOLS_DIR).is_dir():
        return True
    pyproject = directory / "pyproject.toml"
    return pyproject.is_file() and _read_pyproject(pyproject) is not None


def find_project(path: Path | None = None) -> Project:
    """The project named on the command line (``--registry PATH``): a project root directory
    (see :func:`is_project_root`) loads that project; any other file or directory is the tools
    path, with the project found from it upward (see :func:`project_for`)."""
    if path is not None and Path(path).is_dir() and is_project_root(Path(path)):
        return project_at(path)
    return project_for(path)


def project_at(root: str | Path, *, tools: list[str | Path] | None = None) -> Project:
    """The project rooted at directory ``root``: its config (found at or above ``root``, as
    from a working directory) with the config's ``tools:`` paths, or ``tools`` instead."""
    directory = Path(root)
    if not directory.is_dir():
        raise ConfigError(
            f"{directory}: not a directory", hint="give the project root, where toolctl.yaml is"
        )
    tool_paths = None if tools is None else [Path(t) for t in tools]
    return _project(directory, tool_paths, root=directory)


def _root_without_config(start: Path, tools: list[Path] | None) -> Path:
    """The root when no config is found: see the module docstring."""
    if not tools:
        return start
    target = real_path(tools[0])
    for directory in (target, *target.parents):
        if directory.name == TOOLS_DIR:
            return directory.parent
    if target == Path.cwd().resolve():
        return target
    return target.parent


def _project(start: Path, tools: list[Path] | None, *, root: Path | None = None) -> Project:
    """The project whose config is found from ``start``; without one, ``root`` when given."""
    found = find_config(start)
    if found is None:
        root = root or _root_without_config(start, tools)
        settings: dict[str, Any] = {}
        config_file = None
    else:
        config_file, settings = found
        root = config_file.parent
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
        check_state(env, STATE_ENV)
        is_url = env.startswith(POSTGRES_URLS)
        state = env if is_url else str(real_path(Path(env)))
    if not isinstance(state, str):
        raise ConfigError(
            f"{_setting_at(config_file, 'state')}: 'state' must be a path or a postgresql:// URL",
            hint=f"or set {STATE_ENV}, which keeps a database password out of the file",
        )
    if not env:  # the variable was checked above
        check_state(state, lambda: f"{_setting_at(config_file, 'state')}: state")
    schema_dirs = _schema_dirs(settings, root, config_file)
    if "run" in settings:  # checked with the rest of the config: `validate` reports it too
        memory_limit_mb(settings, lambda: _setting_at(config_file, "run"))
        validation_budget_ms(settings, lambda: _setting_at(config_file, "run"))
        approval_ttl(settings, lambda: _setting_at(config_file, "run"))
    if "toolsets" in settings:
        from toolctl.catalog import parse_toolsets

        parse_toolsets(settings, lambda: _setting_at(config_file, "toolsets"))
    if "limits" in settings:
        calls_per_minute(settings, lambda: _setting_at(config_file, "limits"))
    if "auth" in settings:  # the authorization server of `serve`: checked at load, as `run`
        from toolctl.authconfig import auth_settings

        auth_settings(settings, lambda: _setting_at(config_file, "auth"))
    if state.startswith(POSTGRES_URLS):
        default = root / ".toolctl" / "state.db"
        return Project(
            root, config_file, tool_paths, python_path, default, settings, state, schema_dirs
        )
    return Project(
        root, config_file, tool_paths, python_path, root / state, settings, None, schema_dirs
    )
