"""``toolctl import openapi|mcp``: tools you did not write, as tool files you can lint and lock."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolctl.cli import exitcodes

if TYPE_CHECKING:
    from toolctl.imports import ImportReport

import_app = typer.Typer(
    help="Import tools from an OpenAPI description or a running MCP server.",
    no_args_is_help=True,
)

OutDirOpt = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        metavar="DIR",
        help="Directory for the tool files (default: tools.d/<name>). A re-import merges.",
    ),
]


@import_app.command("openapi")
def import_openapi(
    spec: Annotated[
        Path,
        typer.Argument(
            metavar="SPEC", help="OpenAPI 3.0/3.1 file (YAML or JSON).", show_default=False
        ),
    ],
    output: OutDirOpt = None,
    tag: Annotated[
        list[str] | None,
        typer.Option(
            "--tag", metavar="TAG", help="Import only operations with this tag (repeatable)."
        ),
    ] = None,
    operation: Annotated[
        list[str] | None,
        typer.Option(
            "--operation",
            metavar="OPERATION_ID",
            help="Import only this operation (repeatable).",
        ),
    ] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url", metavar="URL", help="The API's base URL (default: the spec's servers)."
        ),
    ] = None,
) -> None:
    """Write one tool file per operation of an OpenAPI description, with a built-in HTTP handler.

    Names come from operationId (snake_case, unique), the input schema from the parameters and
    the JSON request body, the output schema from the 2xx JSON response, annotations from the
    method. Credentials are read at call time from the environment variables each tool lists
    under `secrets`. Nothing is fetched: remote $refs are refused. Importing again over the same
    directory keeps hand edits to description, title, annotations, enabled and requireApproval,
    updates the rest, and lists the changes in `toolctl diff`'s classes. Operations that cannot
    be imported (non-JSON bodies, ...) are listed with the reason.
    """
    from toolctl.imports import Selection
    from toolctl.imports import import_openapi as run_import

    if base_url is not None and not base_url.startswith(("http://", "https://")):
        from toolctl.errors import UsageError

        raise UsageError(f"--base-url {base_url!r} is not an http(s) URL")
    selection = Selection(tuple(tag or ()), tuple(operation or ()), base_url)
    report = run_import(spec, output, selection=selection)
    _print_report(report)
    if not report.files.written and not report.files.unchanged:
        raise typer.Exit(exitcodes.FINDINGS)


@import_app.command("mcp", context_settings={"allow_interspersed_args": False})
def import_mcp(
    target: Annotated[
        list[str],
        typer.Argument(
            metavar="URL | -- COMMAND [ARGS...]",
            help="The server: a Streamable HTTP URL, or the command that starts a stdio server.",
            show_default=False,
        ),
    ],
    output: OutDirOpt = None,
    name: Annotated[
        str | None,
        typer.Option(
            "--name",
            metavar="NAME",
            help="The server's name (directory and tag; default: its serverInfo name).",
        ),
    ] = None,
) -> None:
    """Write one tool file per tool of a running MCP server, each with an `upstream:` block.

    toolctl starts the command (or connects to the URL), lists its tools and stops it. `run`,
    `test` and `serve` then call the upstream through the whole pipeline (validation both
    ways, approval, redaction, history), one connection per server per process. With
    `toolctl lock` and `--locked`, a tool whose live definition left the lock is refused.
    Descriptions are written as the server sent them: `toolctl lint` flags poisoning.
    """
    from toolctl.imports import import_mcp as run_import

    report = run_import(target, output, name=name)
    _print_report(report)
    if not report.files.written and not report.files.unchanged:
        raise typer.Exit(exitcodes.FINDINGS)


def _print_report(report: ImportReport) -> None:
    from toolctl.cli.runview import escape_controls
    from toolctl.contract.report import render_text
    from toolctl.loader import display_path

    files = report.files
    for one in report.imported:
        for note in one.notes:
            typer.echo(f"{one.name}: note: {escape_controls(note)}", err=True)
        if one.skipped:
            typer.echo(
                f"skipped {escape_controls(one.label)}: {escape_controls(one.skipped)}", err=True
            )
    for edit in files.kept_edits:
        typer.echo(f"kept hand edit: {edit}", err=True)
    if files.changes is not None and files.changes.changes:
        typer.echo(escape_controls(render_text(files.changes)), nl=False)
    for path in files.removed:
        typer.echo(f"removed {display_path(path)}", err=True)
    shown = display_path(files.directory)
    typer.echo(
        f"{shown}: {len(files.written)} written, {len(files.unchanged)} unchanged, "
        f"{len(report.skipped)} skipped; check them with `toolctl lint {shown}`",
        err=True,
    )


def register(app: typer.Typer) -> None:
    """Add ``toolctl import`` to ``app``."""
    app.add_typer(import_app, name="import")
