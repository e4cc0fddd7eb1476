"""Importing the user code a tool points at (handlers, hooks, callable transforms).

The runtime is the only part of toolctl that imports user code, and only when a tool runs. Loaded
objects are cached per process by (reference, python path).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from toolctl.errors import HandlerReferenceError

_CACHE: dict[tuple[str, tuple[str, ...]], Any] = {}


def python_path_of(registry: Any) -> tuple[str, ...]:
    """The registry project's extra import roots (``python_path`` in toolctl.yaml)."""
    project = getattr(registry, "project", None)
    paths = getattr(project, "python_path", None) or ()
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
    try:
        from toolctl.references import load_object  # the foundation's loader, when present
    except ImportError:
        return _load_entry_point(ref, python_path)
    return load_object(ref, [Path(p) for p in python_path])


def _load_entry_point(ref: str, python_path: tuple[str, ...]) -> Any:
    """Fallback loader with entry-point semantics (``pkg.mod:attr.sub``)."""
    from importlib_metadata import EntryPoint

    for entry in reversed(python_path):
        if entry not in sys.path:
            sys.path.insert(0, entry)
    try:
        return EntryPoint(name="handler", value=ref, group="toolctl").load()
    except ModuleNotFoundError as exc:
        raise HandlerReferenceError(
            f"cannot import {ref!r}: no module named {exc.name!r}",
            hint="check the module path and python_path in toolctl.yaml",
        ) from None
    except AttributeError as exc:
        raise HandlerReferenceError(
            f"cannot import {ref!r}: {exc}", hint="check the attribute name after ':'"
        ) from None
    except Exception as exc:
        raise HandlerReferenceError(
            f"importing {ref!r} failed: {type(exc).__name__}: {exc}"
        ) from None
