"""Provider exports: the registry as the JSON a provider API or an MCP client takes.

>>> import toolctl
>>> registry = toolctl.load("tools.d")
>>> tools = registry.export("openai")["tools"]  # raises ExportError on a refusal
>>> result = export_result(registry, "anthropic", tags=["weather"])  # data and diagnostics

Every format is an entry point of the group ``toolctl.exporters``
(:mod:`toolctl.export.formats`); the built-ins live one module per target next to this one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from toolctl import refs
from toolctl.catalog import members
from toolctl.diagnostics import Diagnostic, error
from toolctl.errors import ExportError, PluginError
from toolctl.export.base import (
    Exporter,
    ExportOptions,
    ExportResult,
    ToolListExporter,
    finalize,
)
from toolctl.export.formats import FormatEntry, installed, is_builtin, load
from toolctl.spec import SCHEMA_KEYS, ToolSpec
from toolctl.spec.providers import provider_key_problems
from toolctl.yamlsrc import gc_paused

__all__ = [
    "ExportOptions",
    "ExportResult",
    "Exporter",
    "check",
    "export",
    "export_result",
    "get_exporter",
    "list_formats",
    "select",
]


def list_formats() -> list[dict[str, str]]:
    """Installed formats: name, description, package, and ``error`` for a broken plugin."""
    rows: list[dict[str, str]] = []
    for entry in installed().values():
        row = {"name": entry.name, "package": entry.package}
        try:
            row["description"] = load(entry).description
        except PluginError as exc:
            row["description"] = ""
            row["error"] = str(exc)
        rows.append(row)
    return rows


def _entry(fmt: str) -> FormatEntry:
    formats = installed()
    if fmt not in formats:
        raise ExportError(
            f"unknown export format {fmt!r}", hint=f"choose one of: {', '.join(formats)}"
        )
    return formats[fmt]


def get_exporter(fmt: str) -> Exporter:
    """The exporter for ``fmt``; ExportError for an unknown name, PluginError for a broken one."""
    return load(_entry(fmt))


def select(
    tools: Any,
    names: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    toolsets: Sequence[str] | None = None,
) -> list[ToolSpec]:
    """Tools of a registry (or of an iterable of specs) by name, tag and toolset, in name order.

    Follows :meth:`Registry.select`: disabled tools are left out unless named.
    """
    if hasattr(tools, "select"):
        chosen: list[ToolSpec] = tools.select(names=names or None, tags=tags or None)
    else:
        chosen = sorted(tools, key=lambda t: t.name)
        chosen = [t for t in chosen if (t.name in names if names else t.enabled)]
        if tags:
            chosen = [t for t in chosen if set(tags) & set(t.tags)]
    return members(chosen, toolsets) if toolsets else chosen


def _unknown_toolsets(opts: ExportOptions, toolsets: Sequence[str] | None) -> list[Diagnostic]:
    """An error for each ``toolsets`` / ``allowed_toolsets`` name the catalog lacks."""
    out = []
    for option, given in (
        ("--toolset", toolsets or ()),
        ("--allowed-toolset", opts.allowed_toolsets),
    ):
        for name in given:
            if name not in opts.catalog:
                known = ", ".join(sorted(opts.catalog)) or "none declared"
                out.append(
                    error(
                        None,
                        "TX120",
                        f"{option} {name!r}: no such toolset",
                        hint=f"toolsets in toolctl.yaml: {known}",
                    )
                )
    return out


def export_result(
    tools: Any,
    fmt: str,
    *,
    names: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    toolsets: Sequence[str] | None = None,
    **options: Any,
) -> ExportResult:
    """Export the selected tools of a registry (or specs) as ``fmt``, with every diagnostic.

    ``toolsets``: only the tools of these toolsets. ``options``: ``examples_in_description``,
    ``gemini_parameters`` ("json-schema" or "openapi"), ``mcp_protocol`` ("2025-11-25" or
    "2026-07-28"), ``check`` (lossy steps become errors), ``tool_search`` (anthropic: "bm25"
    or "regex"), ``allowed_toolsets`` (the provider's allowed-names list), ``catalog`` (the
    declared toolsets; default: the registry's), and anything a third-party exporter defines.
    ``result.data`` is None on errors.
    """
    return export_selected(tools, fmt, names, tags, toolsets, None, options)


def export_selected(
    tools: Any,
    fmt: str,
    names: Sequence[str] | None,
    tags: Sequence[str] | None,
    toolsets: Sequence[str] | None,
    keep: Callable[[Any], Any] | None,
    options: dict[str, Any],
) -> ExportResult:
    """:func:`export_result`; ``keep`` (a built-in format's) makes what the result holds of
    each tool's entries instead of a detached copy (see :mod:`toolctl.export.stream`)."""
    entry = _entry(fmt)
    exporter = load(entry)
    if "catalog" not in options:
        options["catalog"] = getattr(tools, "toolsets", {})
    options["allowed_toolsets"] = tuple(options.get("allowed_toolsets") or ())
    opts = ExportOptions.from_kwargs(**options)
    unknown = _unknown_toolsets(opts, toolsets)
    if unknown:
        return ExportResult(fmt, None, unknown)
    specs = select(tools, names, tags, toolsets)
    if is_builtin(entry):
        with gc_paused():  # pure data work: nothing cyclic to collect (costly at 10,000 tools)
            if keep is not None and isinstance(exporter, ToolListExporter):
                result = exporter.export_each(specs, opts, keep)
            else:
                result = exporter.export(specs, opts)
        return _with_declaration_checks(result, exporter, specs, opts)
    try:
        result = exporter.export(specs, opts)
    except Exception as exc:  # a third-party exporter's bug must not look like toolctl's
        diag: Diagnostic = error(
            None,
            "TX102",
            f"export format {fmt!r} failed: {type(exc).__name__}: {exc}",
            hint=f"report this to the maintainers of {entry.package!r}",
        )
        return ExportResult(fmt, None, [diag])
    return _with_declaration_checks(result, exporter, specs, opts)


def _outward_refs(spec: ToolSpec) -> list[Diagnostic]:
    """An error for each reference to something outside a schema (a URI, a file): a spec
    built in code may hold one, and no export ships it (loading refuses them already)."""
    out = []
    for key in SCHEMA_KEYS:
        for at, keyword, value in refs.outward(spec.schema(key)):
            out.append(
                error(
                    spec.locate(key, *at, keyword),
                    "TC302",
                    f"{key}: {keyword} {value.split('#')[0]!r} points outside the schema; "
                    "it is not exported",
                    hint="bundle the schema (toolctl.load does) or use #/$defs references",
                    tool=spec.name,
                )
            )
    return out


def _with_declaration_checks(
    result: ExportResult, exporter: Exporter, specs: Sequence[ToolSpec], opts: ExportOptions
) -> ExportResult:
    """``result`` plus declaration problems no exporter checks: providerOptions keys no format
    reads (errors under ``check``) and references outside a schema (errors)."""
    own = getattr(exporter, "provider_keys", ())
    found = [d for spec in specs for d in (*provider_key_problems(spec, own), *_outward_refs(spec))]
    if not found:
        return result
    diags = finalize([*result.diagnostics, *found], opts)
    ok = not any(d.severity.value == "error" for d in diags)
    return ExportResult(result.format, result.data if ok else None, diags)


def export(tools: Any, fmt: str, **options: Any) -> Any:
    """The exported JSON data (what ``toolctl export`` prints); ExportError when refused.

    Same options as :func:`export_result`; ``Registry.export(fmt, **options)`` calls this.
    """
    result = export_result(tools, fmt, **options)
    if not result.ok:
        problems = [d for d in result.diagnostics if d.severity.value == "error"]
        more = f" (and {len(problems) - 1} more)" if len(problems) > 1 else ""
        raise ExportError(
            f"cannot export as {fmt!r}: {problems[0].message}{more}",
            diagnostics=result.diagnostics,
        )
    return result.data


def check(spec: ToolSpec, fmt: str, **options: Any) -> list[Diagnostic]:
    """What exporting one tool as ``fmt`` would report (refusals, lossy steps, name rules).

    The single source of provider facts for other layers (lint rules, editors): the same code
    that produces the export decides what is wrong with it.
    """
    return get_exporter(fmt).check(spec, ExportOptions.from_kwargs(**options))
