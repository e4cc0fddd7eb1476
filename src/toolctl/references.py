"""Python object references in entry-point syntax: ``package.module:attr[.attr]``.

Parsing goes through importlib-metadata's :class:`EntryPoint` (no home-made parser). Static
checking finds the module file and reads its syntax tree to see that the attribute is defined,
without executing anything; only :func:`load_object` imports, and only the runtime calls it.
"""

from __future__ import annotations

import functools
import importlib
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.machinery import PathFinder
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.errors import HandlerReferenceError

if TYPE_CHECKING:
    import ast


@dataclass(frozen=True)
class Reference:
    """A parsed ``module:attr`` reference."""

    module: str
    attr: str

    def __str__(self) -> str:
        return f"{self.module}:{self.attr}"


# The plain ``module:attr`` form, a strict subset of EntryPoint's pattern that it splits the same
# way: the handler a run loads is parsed without importing importlib-metadata (~5 ms of start-up).
_PLAIN = re.compile(r"([\w.]+):([\w.]+)")


def parse(ref: str) -> Reference:
    """Parse ``pkg.module:attr``; :class:`HandlerReferenceError` when it is not of that form."""
    plain = _PLAIN.fullmatch(ref)
    if plain is not None:
        return Reference(plain.group(1), plain.group(2))
    from importlib_metadata import EntryPoint  # imported here: a warm cached load never parses

    ep = EntryPoint(name="ref", value=ref, group="toolctl")
    match = ep.pattern.match(ref)
    if match is None or not match.group("attr"):
        raise HandlerReferenceError(
            f"{ref!r} is not a Python reference", hint="write it as package.module:function"
        )
    return Reference(ep.module, ep.attr)


def import_entry_point(value: str, group: str) -> Any:
    """What ``EntryPoint(value).load()`` returns (a plugin's ``module:attr``), imported without
    importlib-metadata for the plain form; raises whatever importing raises."""
    plain = _PLAIN.fullmatch(value)
    if plain is None:  # module-only, [extras]: the standard reader
        from importlib.metadata import EntryPoint

        return EntryPoint(value, value, group).load()
    obj: Any = importlib.import_module(plain.group(1))
    for part in plain.group(2).split("."):
        obj = getattr(obj, part)
    return obj


def _find_module(module: str, search: list[str]) -> tuple[str | None, str]:
    """Find the file of ``module`` without importing anything; (origin or None, problem)."""
    return _find_module_cached(module, tuple(search))


@functools.lru_cache(maxsize=1024)
def _find_module_cached(module: str, search: tuple[str, ...]) -> tuple[str | None, str]:
    parts = module.split(".")
    paths: list[str] | None = list(search)
    origin: str | None = None
    for depth, part in enumerate(parts):
        spec = PathFinder.find_spec(part, paths)
        if spec is None:
            where = ".".join(parts[:depth]) or "the registry's Python path or site-packages"
            return None, f"module {'.'.join(parts[: depth + 1])!r} not found in {where}"
        origin = spec.origin if spec.has_location else None
        paths = list(spec.submodule_search_locations or [])
        if depth < len(parts) - 1 and not spec.submodule_search_locations:
            return None, f"{'.'.join(parts[: depth + 1])!r} is a module, not a package"
    return origin, ""


def package_dir(module: str) -> Path | None:
    """The directory of package ``module`` (regular or namespace), found without importing."""
    parts = module.split(".")
    paths: list[str] | None = search_path([])
    for part in parts:
        spec = PathFinder.find_spec(part, paths)
        if spec is None or not spec.submodule_search_locations:
            return None
        paths = list(spec.submodule_search_locations)
    return Path(paths[0]) if paths else None


@functools.lru_cache(maxsize=512)
def _module_names(origin: str) -> frozenset[str] | None:
    """Names bound at module level in a source file; None when it cannot be known statically.

    Raises :class:`SyntaxError` when the file does not parse: importing it would fail too.
    """
    if not origin.endswith(".py"):
        return None
    import ast

    try:
        tree = ast.parse(Path(origin).read_bytes(), filename=origin)
    except (OSError, ValueError):
        return None
    names: set[str] = set()
    for node in _top_level(tree.body):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for target in targets:
                names.update(n.id for n in ast.walk(target) if isinstance(n, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    return None
                names.add(alias.asname or alias.name.split(".")[0])
    if "__getattr__" in names:
        return None
    return frozenset(names)


def _top_level(body: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """Module-level statements, looking inside if/try blocks (conditional definitions)."""
    import ast

    for node in body:
        if isinstance(node, ast.If):
            yield from _top_level(node.body)
            yield from _top_level(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody):
                yield from _top_level(block)
            for handler in node.handlers:
                yield from _top_level(handler.body)
        else:
            yield node


def search_path(python_path: Iterable[Path]) -> list[str]:
    """The directories searched for handler modules: the registry's Python path, then sys.path."""
    return [str(p) for p in python_path] + [p for p in sys.path if p]


def check_static(ref: str, python_path: Iterable[Path]) -> str | None:
    """Why ``ref`` cannot resolve (a message), or None when it looks fine. Never imports."""
    try:
        parsed = parse(ref)
    except HandlerReferenceError as exc:
        return str(exc)
    origin, problem = _find_module(parsed.module, search_path(python_path))
    if problem:
        return problem
    if origin is None:
        return None  # namespace package or built-in: cannot check statically
    try:
        names = _module_names(origin)
    except SyntaxError as exc:
        return f"module {parsed.module!r} has a syntax error (line {exc.lineno}: {exc.msg})"
    first = parsed.attr.split(".")[0]
    if names is not None and first not in names:
        return f"module {parsed.module!r} defines no {first!r} at module level"
    return None


def load_object(ref: str, python_path: Iterable[Path] = ()) -> Any:
    """Import and return the object ``ref`` names (runtime only: this executes user code)."""
    parsed = parse(ref)
    for entry in reversed([str(p) for p in python_path]):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    obj: Any = _import(parsed.module, ref)
    for part in parsed.attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise HandlerReferenceError(
                f"{ref!r}: {parsed.module!r} has no attribute {part!r}"
            ) from None
    return obj


def _import(module: str, ref: str) -> Any:
    """Import ``module``; whatever its code raises becomes a :class:`HandlerReferenceError`."""
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and (module == exc.name or module.startswith(exc.name + ".")):
            raise HandlerReferenceError(
                f"cannot import {module!r} for {ref!r}: {exc}",
                hint="check the module name and the pythonPath setting in toolctl.yaml",
            ) from exc
        raise HandlerReferenceError(  # the module itself imports something missing
            f"importing {module!r} for {ref!r} failed: {type(exc).__name__}: {exc}",
            hint=f"install {exc.name!r} in the environment toolctl runs in",
        ) from exc
    except (Exception, SystemExit) as exc:
        # User code runs here: a syntax error, a failing import inside it, an exception or
        # sys.exit() at module level. Ctrl-C (KeyboardInterrupt) still propagates.
        raise HandlerReferenceError(
            f"importing {module!r} for {ref!r} failed: {type(exc).__name__}: {exc}",
            hint="fix the module (it runs when the tool is first called); "
            "toolctl lint --resolve imports every handler to find this early",
        ) from exc
