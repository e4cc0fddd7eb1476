"""Building a :class:`~toolctl.runtime.pipeline.call.Call` for a registry: the store it records in
(the ``store`` option, see :mod:`toolctl.runtime.api`), and the registry's
:class:`~toolctl.runtime.pipeline.state.CallSite` (python path, locator, resource limits), worked
out
once per registry."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.runtime.execution.isolation.limits import limits_of
from toolctl.runtime.execution.loading import python_path_of
from toolctl.runtime.history.sqlite import open_store
from toolctl.runtime.memo import PerObject
from toolctl.runtime.pipeline.call import Call
from toolctl.runtime.pipeline.state import CallSite
from toolctl.runtime.resources import current
from toolctl.yamlsrc import real_path

if TYPE_CHECKING:
    from toolctl.config import Project
    from toolctl.runtime.history.records import RunStore
    from toolctl.runtime.options import CallOptions, StoreChoice
    from toolctl.runtime.source import ToolSource
    from toolctl.spec import ToolSpec


def resolve_store(registry: ToolSource, store: StoreChoice = None) -> RunStore:
    """The store object for the ``store`` option (see :mod:`toolctl.runtime.api`)."""
    if store is False:
        return current().memory
    if store is None or store is True:
        if registry.project is None:
            return current().memory
        return current().default_store(registry)
    if isinstance(store, (str, Path)):
        return open_store(store)
    return store


def _make_site(registry: ToolSource) -> CallSite:
    return CallSite(
        python_path_of(registry), locator(registry), limits_of(registry), registry.locked
    )


# Once per registry: path resolution costs more than the rest of a call.
_SITES: PerObject[ToolSource, CallSite] = PerObject(_make_site, limit=256)


def site_of(registry: ToolSource) -> CallSite:
    """The registry's python path, locator and resource limits, worked out once per registry."""
    return _SITES(registry)


def locator(registry: ToolSource) -> dict[str, Any] | None:
    """How a background worker finds this registry again: project root and tool paths."""
    project = registry.project
    return None if project is None else project_locator(project)


def project_locator(project: Project) -> dict[str, Any]:
    """The locator of ``project`` (see :func:`locator`)."""
    return {
        "root": str(real_path(Path(project.root))),
        "tools": [str(real_path(Path(p))) for p in project.tool_paths],
    }


def spec_of(registry: ToolSource, name: str) -> ToolSpec:
    """The enabled tool ``name``; :class:`DisabledToolError` when it is disabled."""
    spec = registry.get(name)
    spec.check_enabled("run")
    return spec


def new_call(registry: ToolSource, name: str, options: CallOptions) -> Call:
    """A new call of tool ``name`` with ``options``."""
    return Call(
        spec_of(registry, name),
        resolve_store(registry, options.store),
        site_of(registry),
        options,
    )
