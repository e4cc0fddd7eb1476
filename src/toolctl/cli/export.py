"""``toolctl export``: the registry in a provider's tool format, JSON on stdout.

Diagnostics go to stderr (info notes only with ``--verbose``). Exit 0 when exported, 1 when the
export was refused (or, with ``--check``, anything was lossy), 2 for an unknown format.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer

from toolctl.cli import exitcodes
from toolctl.cli.options import (
    LockedOpt,
    PacksOpt,
    PathAliasOpt,
    PathsArg,
    RegistryOpt,
    TagsOpt,
    VerboseOpt,
    format_option,
    output_option,
    registry_path,
    tool_option,
)


def _list_formats() -> int:
    from toolctl.cli.render import console
    from toolctl.export import list_formats

    con = console()
    broken = False
    for row in list_formats():
        if "error" in row:
            broken = True
            con.print(f"{row['name']:<18} BROKEN ({row['package']}): {row['error']}", markup=False)
        else:
            con.print(f"{row['name']:<18} {row['description']}", markup=False)
    return exitcodes.FINDINGS if broken else exitcodes.OK


def _write(data: Any, indent: int | None, output: Path | None) -> None:
    from toolctl.cli.render import write_output

    text = json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False) + "\n"
    write_output(text, output)


def export_command(
    paths: PathsArg = None,
    fmt: Annotated[
        str | None,
        format_option(
            "Target format, required: openai, anthropic, gemini, bedrock, mistral, mcp "
            "or another from --list-formats.",
            metavar="FORMAT",
        ),
    ] = None,
    registry: RegistryOpt = None,
    tool: Annotated[list[str] | None, tool_option("Export this tool (repeatable).")] = None,
    tag: TagsOpt = None,
    packs: PacksOpt = True,
    output: Annotated[Path | None, output_option("Write the JSON to FILE.")] = None,
    indent: Annotated[
        int,
        typer.Option(
            "--indent", min=0, metavar="SPACES", help="JSON indent in spaces; 0 for one line."
        ),
    ] = 2,
    check: Annotated[
        bool, typer.Option("--check", help="Treat lossy steps as errors (for CI).")
    ] = False,
    list_formats: Annotated[
        bool, typer.Option("--list-formats", help="List the installed formats and exit.")
    ] = False,
    examples_in_description: Annotated[
        bool,
        typer.Option(
            "--examples-in-description",
            help="Append inputExamples to descriptions where the target has no field.",
        ),
    ] = False,
    gemini_parameters: Annotated[
        str,
        typer.Option(
            "--gemini-parameters",
            metavar="json-schema|openapi",
            help="gemini: how parameters are written.",
        ),
    ] = "json-schema",
    mcp_protocol: Annotated[
        str,
        typer.Option(
            "--mcp-protocol", metavar="2025-11-25|2026-07-28", help="mcp: the protocol version."
        ),
    ] = "2025-11-25",
    verbose: VerboseOpt = False,
    path: PathAliasOpt = None,
    locked: LockedOpt = False,
) -> None:
    """Export tools as OpenAI, Anthropic, Gemini, Bedrock, Mistral or MCP tool JSON."""
    if list_formats:
        raise typer.Exit(_list_formats())
    from toolctl.cli.registries import load
    from toolctl.cli.render import print_diagnostics
    from toolctl.errors import ExportError, UsageError
    from toolctl.export import export_result, get_exporter

    # Errors go to the CLI's one error boundary (cli/app.run): UsageError exits 2, others 1.
    if fmt is None:
        raise UsageError("--format is required", hint="see toolctl export --list-formats")
    try:
        get_exporter(fmt)
    except ExportError as exc:
        raise UsageError(exc.message, hint=exc.hint) from None
    loaded = load(registry_path(registry, path), paths, packs=packs)
    if not loaded.ok:
        raise ExportError(
            "the registry has errors; nothing exported",
            hint="fix them (toolctl validate) so the export has every tool",
            diagnostics=loaded.diagnostics,
        )
    if locked:
        from toolctl.contract import verify_locked

        verify_locked(loaded)
    result = export_result(
        loaded,
        fmt,
        names=tool,
        tags=tag,
        check=check,
        examples_in_description=examples_in_description,
        gemini_parameters=gemini_parameters,
        mcp_protocol=mcp_protocol,
    )
    shown = [d for d in result.diagnostics if verbose or d.severity.value != "info"]
    print_diagnostics(shown)
    if not result.ok:
        raise typer.Exit(exitcodes.FINDINGS)
    _write(result.data, indent or None, output)
    raise typer.Exit(exitcodes.OK)


def register(app: typer.Typer) -> None:
    """Add ``toolctl export`` to ``app``."""
    app.command("export")(export_command)
