"""What the exporters share about large catalogs: deferred tools and allowed-names lists.

A tool's loading comes from :func:`toolctl.catalog.loading_of` over ``options.catalog`` (the
declared toolsets); each exporter compiles it to its provider's own mechanism, or says (an info
finding) that the provider has none and every tool is sent up front.
"""

from __future__ import annotations

from collections.abc import Sequence

from toolctl.catalog import is_deferred
from toolctl.diagnostics import Diagnostic, Severity, error
from toolctl.export.base import ExportOptions
from toolctl.spec import ToolSpec


def deferred(spec: ToolSpec, options: ExportOptions) -> bool:
    """True when ``spec`` is loaded on demand (its own loading, else its toolset's)."""
    return is_deferred(spec, options.catalog)


def allowed_names(specs: Sequence[ToolSpec], options: ExportOptions) -> list[str] | None:
    """The names of the tools in ``options.allowed_toolsets`` (None: no such option given)."""
    if not options.allowed_toolsets:
        return None
    wanted = set(options.allowed_toolsets)
    return [s.name for s in specs if s.toolset in wanted]


def allowed_problems(
    label: str, specs: Sequence[ToolSpec], options: ExportOptions, *, supported: bool
) -> list[Diagnostic]:
    """An error when ``--allowed-toolset`` is given to a target without an allowed-names
    mechanism, or when it names toolsets with no exported tool (the model could call nothing)."""
    if not options.allowed_toolsets:
        return []
    if not supported:
        return [
            error(
                None,
                "TX121",
                f"{label} has no allowed-names mechanism for --allowed-toolset",
                hint="export only those tools instead: --toolset NAME",
            )
        ]
    if allowed_names(specs, options):
        return []
    return [
        error(
            None,
            "TX122",
            f"{label}: no exported tool is in toolset(s) "
            f"{', '.join(options.allowed_toolsets)}; the model could call nothing",
            hint="check the toolset names (toolctl list shows each tool's toolset)",
        )
    ]


def sent_up_front(
    label: str, specs: Sequence[ToolSpec], options: ExportOptions
) -> list[Diagnostic]:
    """An info finding when deferred tools go to a target that loads every tool up front."""
    count = sum(1 for s in specs if deferred(s, options))
    if not count or not options.infos:
        return []
    return [
        Diagnostic.at(
            None,
            Severity.INFO,
            "TX225",
            f"{label} has no deferred loading: {count} deferred tool(s) are exported up front",
            hint="export one toolset (--toolset NAME) or allow a few (--allowed-toolset NAME)",
        )
    ]
