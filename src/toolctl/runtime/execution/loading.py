"""Importing the user code a tool points at (handlers, hooks, callable transforms).

The runtime is the only part of toolctl that imports user code, and only when a tool runs. Loaded
objects are cached per process by (reference, python path).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolctl.runtime.history.records import HasProject

from toolctl.errors import HandlerReferenceError

_CACHE: dict[tuple[str, tuple[str, ...]], Any] = {}


def python_path_of(registry: HasProject) -> tuple[str, ...]:
    """The registry project's extra import roots (``python_path`` in toolctl.yaml)."""
    project = registry.project
    paths = project.python_path if project is not None else ()
    return tuple(str(p) for p in paths)


def load_callable(ref: str, python_path: Sequence[str | Path] = ()) -> Callable[..., Any]:
    """Import ``pkg.module:attr`` (with ``python_path`` importable) and return the callable."""
    key = (ref, tuple(str(p) for p in python_path))
    found = _CACHE.get(key)
    if found is not None:
        return found  # type: ignore[no-any-return]
    obj = _load(ref, key[1])
    if not callable(obj):
        raise HandlerReferenceError(
            f"{ref!r} is a {type(obj).__name__}, not a callable",
            hint="point the reference at a function",
        )
    _CACHE[key] = obj
    return obj  # type: ignore[no-any-return]


def _load(ref: str, python_path: tuple[str, ...]) -> Any:
    from toolctl.references import load_object

    return load_object(ref, [Path(p) for p in python_path])
