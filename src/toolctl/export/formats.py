"""The export formats installed: entry-point group ``toolctl.exporters``.

Built-in formats are declared in toolctl's own ``pyproject.toml`` exactly as a third-party package
declares its own (``[project.entry-points."toolctl.exporters"] myformat = "pkg.mod:EXPORTER"``),
so a new provider format is a package, not a fork. An entry point names an object with ``name``,
``description``, ``export(specs, options)`` and ``check(spec, options)`` (see
:class:`~toolctl.export.base.Exporter`), or a class building one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from toolctl import DISTRIBUTION
from toolctl.cache import remembered_scan, strings
from toolctl.errors import PluginError
from toolctl.export.base import Exporter
from toolctl.references import import_entry_point
from toolctl.spec.providers import BUILTIN_FORMATS, GROUP


def entry_points(group: str) -> Any:
    """``importlib.metadata.entry_points`` (imported on first use: a run that only needs the
    strict-mode helpers of this package does not pay for it)."""
    from importlib import metadata

    return metadata.entry_points(group=group)


BUILTIN = BUILTIN_FORMATS


@dataclass(frozen=True)
class FormatEntry:
    """One installed format: its name, the ``module:attr`` reference, and the package."""

    name: str
    value: str
    package: str


def installed() -> dict[str, FormatEntry]:
    """Every format by name, in name order (the built-ins even without installed metadata)."""
    found = {n: FormatEntry(n, v, DISTRIBUTION) for n, v in BUILTIN.items()}
    for entry in remembered_scan(f"<exporters {GROUP}>", _scan, _entry):
        found[entry.name] = entry
    return dict(sorted(found.items()))


def _entry(item: Any) -> FormatEntry:
    return FormatEntry(*strings(item))  # TypeError when not three strings


def _scan() -> list[list[str]]:
    """[name, value, package] of each installed entry point (remembered by the CLI's cache while
    ``sys.path`` is unchanged: scanning every distribution's metadata is most of a warm export)."""
    found = []
    for ep in entry_points(group=GROUP):
        dist = getattr(ep, "dist", None)
        found.append([ep.name, ep.value, dist.name if dist is not None else "?"])
    return found


def is_builtin(entry: FormatEntry) -> bool:
    """True for a format toolctl ships (its errors are toolctl's own bugs), whichever installed
    distribution declared the entry point."""
    return BUILTIN.get(entry.name) == entry.value


def load(entry: FormatEntry) -> Exporter:
    """Import an exporter; a broken plugin raises :class:`PluginError` saying which and why."""
    try:
        obj: Any = import_entry_point(entry.value, GROUP)
        if isinstance(obj, type):
            obj = obj()
    except Exception as exc:  # any failure inside third-party code is the plugin's
        raise PluginError(
            f"export format {entry.name!r} ({entry.value}, from {entry.package}) failed to "
            f"load: {type(exc).__name__}: {exc}",
            hint=f"reinstall or fix the package {entry.package!r}, or uninstall it",
        ) from exc
    if not isinstance(obj, Exporter):
        raise PluginError(
            f"export format {entry.name!r} ({entry.value}, from {entry.package}) is not an "
            "exporter: it needs name, description, export(specs, options) and check(spec, "
            "options)",
            hint=f"report this to the maintainers of {entry.package!r}",
        )
    return obj
