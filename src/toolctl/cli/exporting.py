"""The work of ``toolctl export`` once its options are parsed, without Typer: the Typer command
(:mod:`toolctl.cli.export`) and the quick path (:mod:`toolctl.cli.quick`) both call :func:`run`."""

from __future__ import annotations

from pathlib import Path

from toolctl.cli import exitcodes


def run(
    targets: list[str] | None = None,
    provider: str | None = None,
    fmt: str | None = None,
    registry: Path | None = None,
    tool: list[str] | None = None,
    tag: list[str] | None = None,
    packs: bool = True,
    output: Path | None = None,
    indent: int | None = None,
    check: bool = False,
    examples_in_description: bool = False,
    gemini_parameters: str = "json-schema",
    mcp_protocol: str = "2025-11-25",
    toolset: list[str] | None = None,
    allowed_toolset: list[str] | None = None,
    tool_search: str = "bm25",
    budget: bool = False,
    verbose: bool = False,
    locked: bool = False,
    verify_key: Path | None = None,
) -> int:
    """Export the registry ``registry`` names (``--path`` already folded in) as ``provider``'s
    tool JSON; the exit code. ``verify_key`` is only given with ``locked``."""
    from toolctl.cli.exportout import exported_to
    from toolctl.cli.registries import fix_hint, load
    from toolctl.cli.render import print_diagnostics
    from toolctl.cli.targets import split_targets
    from toolctl.errors import ExportError, UsageError
    from toolctl.export import get_exporter
    from toolctl.export.stream import write_export

    # Errors go to the CLI's one error boundary (cli/app.run): UsageError exits 2, others 1.
    names, paths = split_targets(targets)
    if budget:
        from toolctl.cli.exportbudget import report_budget

        report_budget(
            provider,
            fmt,
            names + (tool or []),
            load(registry, paths, packs=packs),
            tags=tag,
            toolsets=toolset,
            tool_search=tool_search,
        )
    target = _provider(provider, fmt, names)
    try:
        get_exporter(target)
    except ExportError as exc:
        raise UsageError(exc.message, hint=exc.hint) from None
    names += tool or []
    loaded = load(registry, paths, packs=packs)
    if not loaded.ok:
        raise ExportError(
            "the registry has errors; nothing exported",
            hint=fix_hint(loaded, "fix them (toolctl validate) so the export has every tool"),
            diagnostics=loaded.diagnostics,
        )
    if locked:
        from toolctl.contract import verify_locked

        verify_locked(loaded, verify_key=verify_key)
    with exported_to(output, indent) as out:
        result = write_export(
            loaded,
            target,
            out,
            indent=out.indent,
            names=names or None,
            tags=tag,
            check=check,
            examples_in_description=examples_in_description,
            gemini_parameters=gemini_parameters,
            mcp_protocol=mcp_protocol,
            toolsets=toolset,
            allowed_toolsets=allowed_toolset,
            tool_search=tool_search,
            infos=verbose,  # info notes are shown only then: not even located otherwise
        )
        out.keep = result.ok
    shown = [d for d in result.diagnostics if verbose or d.severity.value != "info"]
    print_diagnostics(shown)
    return exitcodes.OK if result.ok else exitcodes.FINDINGS


def _provider(provider: str | None, fmt: str | None, names: list[str]) -> str:
    """The provider format: --provider, the old ``-f PROVIDER``, or the first positional
    (then taken off ``names``)."""
    import sys

    from toolctl.errors import UsageError

    if fmt is not None and fmt != "json":
        if provider is not None:
            raise UsageError(
                f"-f/--format is the output format (json), not a provider: {fmt!r}",
                hint=f"leave -f {fmt} out: the provider is {provider}",
            )
        sys.stderr.write(
            f"toolctl: note: `export --format {fmt}` is deprecated; write `toolctl export "
            f"{fmt}` (or --provider {fmt}): -f/--format is the output format everywhere\n"
        )
        provider = fmt
    if provider is not None:
        return provider
    from toolctl.export.formats import installed  # remembered by the cache: no metadata scan

    formats = list(installed())
    if names and names[0] in formats:
        return names.pop(0)
    if names:
        hint = f"put the provider first: toolctl export openai {' '.join(names)}"
        what = f"{names[0]!r} is not a provider format"
    else:
        hint = "e.g. toolctl export openai"
        what = "name the provider format to export to"
    raise UsageError(
        f"{what}; the installed ones are {', '.join(formats)}",
        hint=f"{hint} (toolctl export --list-formats describes them)",
    )
