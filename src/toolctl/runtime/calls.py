"""Building a :class:`~toolctl.runtime.pipeline.Call` for a registry: the store it records in
(the ``store`` argument, see :mod:`toolctl.runtime.api`), and the registry's python path,
locator and resource limits, computed once per registry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from toolctl.runtime.limits import ResourceLimits, limits_of
from toolctl.runtime.loading import python_path_of
from toolctl.runtime.memstore import MemoryStore
from toolctl.runtime.pipeline import Call, Options
from toolctl.runtime.store import open_store
from toolctl.spec import ToolSpec

_MEMORY = MemoryStore()
_DEFAULT_STORES: dict[int, tuple[Any, Any]] = {}


def resolve_store(registry: Any, store: Any = None) -> Any:
    """The store object for the ``store`` argument (see the module docstring)."""
    if store is False:
        return _MEMORY
    if store is None or store is True:
        if getattr(registry, "project", None) is None:
            return _MEMORY
        found = _DEFAULT_STORES.get(id(registry))
        if found is None or found[0] is not registry:
            if len(_DEFAULT_STORES) > 256:
                _DEFAULT_STORES.clear()
            found = _DEFAULT_STORES[id(registry)] = (registry, open_store(None, registry))
        return found[1]
    if isinstance(store, (str, Path)):
        return open_store(store)
    return store


_INFO: dict[int, tuple[Any, tuple[str, ...], dict[str, Any] | None, ResourceLimits]] = {}


def _info(registry: Any) -> tuple[tuple[str, ...], dict[str, Any] | None, ResourceLimits]:
    """The registry's python path, locator and resource limits, computed once per registry
    (path resolution costs more than the rest of a call)."""
    found = _INFO.get(id(registry))
    if found is None or found[0] is not registry:
        if len(_INFO) > 256:
            _INFO.clear()
        found = _INFO[id(registry)] = (
            registry,
            python_path_of(registry),
            locator(registry),
            limits_of(registry),
        )
    return found[1], found[2], found[3]


def locator(registry: Any) -> dict[str, Any] | None:
    """How a background worker finds this registry again: project root and tool paths."""
    project = getattr(registry, "project", None)
    if project is None:
        return None
    return {
        "root": str(Path(project.root).resolve()),
        "tools": [str(Path(p).resolve()) for p in project.tool_paths],
    }


def spec_of(registry: Any, name: str) -> ToolSpec:
    spec: ToolSpec = registry.get(name)
    spec.check_enabled("run")
    return spec


def new_call(registry: Any, name: str, store: Any, sync: bool, **options: Any) -> Call:
    spec = spec_of(registry, name)
    python_path, where, limits = _info(registry)
    return Call(
        spec,
        resolve_store(registry, store),
        python_path=python_path,
        options=Options(**options),
        sync=sync,
        registry=where,
        limits=limits,
    )
