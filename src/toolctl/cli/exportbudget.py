"""``toolctl export --budget``: the definitions a model sees up front, per provider, against
``export.budget`` in toolctl.yaml (see :mod:`toolctl.export.upfront`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NoReturn

import typer

from toolctl.cli import exitcodes

if TYPE_CHECKING:
    from toolctl.registry import Registry


def _formats(provider: str | None, names: list[str]) -> list[str]:
    """The formats to measure: --provider, the first positional, or every built-in one."""
    from toolctl.errors import UsageError
    from toolctl.export.upfront import DEFAULT_FORMATS, MCP_SEARCH
    from toolctl.spec.providers import installed_format_names

    known = {*installed_format_names(), MCP_SEARCH}
    if provider is None and names and names[0] in known:
        provider = names.pop(0)
    if provider is None:
        return list(DEFAULT_FORMATS)
    if provider not in known:
        raise UsageError(
            f"{provider!r} is not a provider format",
            hint=f"choose one of: {', '.join(sorted(known))}",
        )
    return [provider]


def report_budget(
    provider: str | None,
    fmt: str | None,
    names: list[str],
    loaded: Registry,
    *,
    tags: Sequence[str] | None,
    toolsets: Sequence[str] | None,
    tool_search: str,
) -> NoReturn:
    """Print the up-front sizes (a table, or JSON with ``-f json``) and exit: 0 within the
    budget, 1 over it (or when an export is refused), 2 for a usage error."""
    from toolctl.cli.registries import fix_hint
    from toolctl.cli.render import print_diagnostics, print_error, print_json
    from toolctl.config import setting_location
    from toolctl.errors import ExportError, UsageError
    from toolctl.export.upfront import budgets, measure, over_budget

    if fmt not in (None, "json"):
        raise UsageError(
            f"--budget reports as text or json, not {fmt!r}",
            hint="leave -f out for a table, or -f json",
        )
    formats = _formats(provider, names)
    if not loaded.ok:
        raise ExportError(
            "the registry has errors; nothing measured",
            hint=fix_hint(loaded, "fix them (toolctl validate) first"),
            diagnostics=loaded.diagnostics,
        )
    project = loaded.project
    config_file = project.config_file if project is not None else None
    section = project.section("export") if project is not None else {}
    limits = budgets(section, lambda: setting_location(config_file, "export"))
    rows, failed = [], False
    for name in formats:
        try:
            rows.append(
                measure(
                    loaded,
                    name,
                    names=names or None,
                    tags=tags,
                    toolsets=toolsets,
                    tool_search=tool_search,
                    infos=False,
                )
            )
        except ExportError as exc:
            print_diagnostics([d for d in exc.diagnostics if d.severity.value == "error"])
            print_error(exc)
            failed = True
    over = [(row, limit) for row in rows if (limit := over_budget(row, limits)) is not None]
    if fmt == "json":
        print_json([{**r.as_dict(), "budget": limits.get(r.format, limits.get("*"))} for r in rows])
    else:
        _table(rows, limits)
    for row, limit in over:
        where = setting_location(config_file, "export")
        print_error(
            ExportError(
                f"{where}: {row.format}: about {row.tokens} tokens of tool definitions up front, "
                f"over the budget of {limit} (export.budget)",
                hint="defer tools (loading: deferred, or a deferred toolset), shorten "
                "descriptions, or raise the budget",
            )
        )
    raise typer.Exit(exitcodes.FINDINGS if over or failed else exitcodes.OK)


def _table(rows: list[Any], limits: dict[str, int]) -> None:
    from toolctl.cli.render import console
    from toolctl.cli.render import table as make_table

    table = make_table("format", "tools up front", "bytes", "~tokens", "of full", "budget")
    for r in rows:
        limit = limits.get(r.format, limits.get("*"))
        table.add_row(
            r.format,
            f"{r.tools}/{r.total}",
            str(r.bytes),
            str(r.tokens),
            f"{r.share:.1%}",
            "-" if limit is None else str(limit),
        )
    console().print(table)
