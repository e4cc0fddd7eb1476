"""``toolctl validate`` and ``toolctl schema``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolctl.cli.options import OutputFormat


def validate(
    paths: Annotated[
        list[Path] | None,
        typer.Argument(help="Tool files or directories (default: the registry found from here)."),
    ] = None,
    fmt: Annotated[
        OutputFormat, typer.Option("--format", "-f", help="Output format.")
    ] = OutputFormat.text,
    packs: Annotated[
        bool, typer.Option("--packs/--no-packs", help="Include installed tool packs.")
    ] = True,
) -> None:
    """Check every tool file: format, schemas, $refs, examples, tests and handler references.

    Reports every problem in every file as `file:line:col: error CODE message`. Never imports or
    runs user code. Exit 0 when clean, 1 when anything is wrong.
    """
    from toolctl.cli import exitcodes
    from toolctl.cli.render import diagnostics_json, print_diagnostics, print_json, summary_line
    from toolctl.config import project_for
    from toolctl.loader import display_path, load_registry
    from toolctl.yamlsrc import real_path

    project = project_for(paths[0] if paths else None)
    if paths:
        project.tool_paths = [real_path(p) for p in paths]
    registry = load_registry(project=project, packs=packs)
    checked = f"{len(registry)} tool(s) in " + ", ".join(
        display_path(p) for p in project.tool_paths
    )
    if fmt is OutputFormat.json:
        print_json(diagnostics_json(registry.diagnostics, tools=sorted(registry.tools)))
    else:
        print_diagnostics(registry.diagnostics)
        typer.echo(summary_line(registry.diagnostics, checked), err=True)
    raise typer.Exit(exitcodes.OK if registry.ok else exitcodes.FINDINGS)


def schema(
    output: Annotated[
        Path | None, typer.Option("--output", "-o", help="Write to this file instead of stdout.")
    ] = None,
) -> None:
    """Print the JSON Schema of the tool file format (for editors and CI)."""
    import json

    from toolctl.spec import format_schema

    text = json.dumps(format_schema(), indent=2) + "\n"
    if output is None:
        typer.echo(text, nl=False)
    else:
        output.write_text(text, encoding="utf-8")
        typer.echo(f"wrote {output}", err=True)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("validate")(validate)
    app.command("schema")(schema)
