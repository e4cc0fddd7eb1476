"""``toolctl export``: the registry in a provider's tool format, JSON on stdout.

Diagnostics go to stderr (info notes only with ``--verbose``). Exit 0 when exported, 1 when the
export was refused (or, with ``--check``, anything was lossy), 2 for an unknown format.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from toolctl.cli import exitcodes, exporting
from toolctl.cli.options import (
    LockedOpt,
    PacksOpt,
    PathAliasOpt,
    RegistryOpt,
    TagsOpt,
    VerboseOpt,
    VerifyKeyOpt,
    format_option,
    output_option,
    registry_path,
    tool_option,
    verify_key_usage,
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


def _complete_targets(ctx: Any, args: list[str], incomplete: str) -> list[tuple[str, str]]:
    from toolctl.cli.complete import tool_names
    from toolctl.spec.providers import installed_format_names

    given = ctx.params.get("targets") or []
    formats = [] if given or ctx.params.get("provider") else sorted(installed_format_names())
    items = [(f, "provider format") for f in formats if f.startswith(incomplete)]
    return items + [(i.value, i.help or "") for i in tool_names(ctx, incomplete)]


def export_command(
    targets: Annotated[
        list[str] | None,
        typer.Argument(
            metavar="[PROVIDER] [TOOL]...",
            help="The provider format (openai, anthropic, gemini, bedrock, mistral, mcp or "
            "another from --list-formats), then the tools to export (default: all).",
            show_default=False,
            autocompletion=_complete_targets,
        ),
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(
            "--provider",
            metavar="PROVIDER",
            help="The provider format, when not the first argument.",
            show_default=False,
        ),
    ] = None,
    fmt: Annotated[
        str | None,
        format_option("json (the only output format of an export).", metavar="json"),
    ] = None,
    registry: RegistryOpt = None,
    tool: Annotated[list[str] | None, tool_option("Export this tool (repeatable).")] = None,
    tag: TagsOpt = None,
    packs: PacksOpt = True,
    output: Annotated[Path | None, output_option("Write the JSON to FILE.")] = None,
    indent: Annotated[
        int | None,
        typer.Option(
            "--indent",
            min=0,
            metavar="SPACES",
            help="JSON indent in spaces; 0 for one line. Default: 2 on a terminal, one line "
            "into a file or pipe.",
            show_default=False,
        ),
    ] = None,
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
    toolset: Annotated[
        list[str] | None,
        typer.Option(
            "--toolset",
            metavar="NAME",
            help="Export only the tools of this toolset (repeatable).",
            show_default=False,
        ),
    ] = None,
    allowed_toolset: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-toolset",
            metavar="NAME",
            help="Export every tool but let the model call only this toolset's, through the "
            "provider's allowed-names list (openai, openai-responses, gemini; repeatable).",
            show_default=False,
        ),
    ] = None,
    tool_search: Annotated[
        str,
        typer.Option(
            "--tool-search",
            metavar="bm25|regex",
            help="anthropic: the tool search tool listed with deferred tools.",
        ),
    ] = "bm25",
    budget: Annotated[
        bool,
        typer.Option(
            "--budget",
            help="Report the definition bytes and estimated tokens a model sees up front, per "
            "provider (all of them unless one is named); exit 1 over export.budget.",
        ),
    ] = False,
    verbose: VerboseOpt = False,
    path: PathAliasOpt = None,
    locked: LockedOpt = False,
    verify_key: VerifyKeyOpt = None,
) -> None:
    """Export tools as OpenAI, Anthropic, Gemini, Bedrock, Mistral or MCP tool JSON.

    `toolctl export openai` exports every enabled tool; `toolctl export openai NAME...` only
    those. The old `--format openai` still works, with a note: -f/--format is the output
    format everywhere.
    """
    if list_formats:
        raise typer.Exit(_list_formats())
    verify_key_usage(locked, verify_key)
    code = exporting.run(
        targets,
        provider,
        fmt,
        registry_path(registry, path),
        tool,
        tag,
        packs,
        output,
        indent,
        check,
        examples_in_description,
        gemini_parameters,
        mcp_protocol,
        toolset,
        allowed_toolset,
        tool_search,
        budget,
        verbose,
        locked,
        verify_key,
    )
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add ``toolctl export`` to ``app``."""
    app.command("export")(export_command)
