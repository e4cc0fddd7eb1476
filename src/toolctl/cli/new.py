"""``toolctl new --from module:function``: declare an existing Python function as a tool."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolctl.cli.options import RegistryOpt, output_option


def new(
    source: Annotated[
        str,
        typer.Option(
            "--from",
            metavar="MODULE:FUNCTION",
            help="The function to declare, e.g. mypkg.search:search (required).",
        ),
    ],
    registry: RegistryOpt = None,
    name: Annotated[
        str | None,
        typer.Option("--name", metavar="NAME", help="Tool name (default: the function's)."),
    ] = None,
    output: Annotated[
        Path | None, output_option("Tool file to write (default: tools.d/NAME.yaml).")
    ] = None,
    handler_dir: Annotated[
        Path | None,
        typer.Option(
            "--handler-dir",
            metavar="DIR",
            help="Directory for the handler module (default: the first pythonPath entry).",
        ),
    ] = None,
    read_only: Annotated[
        bool | None,
        typer.Option(
            "--read-only/--destructive",
            help="Declare the function read-only, or destructive (default: say neither; "
            "lint asks).",
        ),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Overwrite the tool file and handler module.")
    ] = False,
) -> None:
    """Write the tool file for an existing Python function, and a handler module calling it.

    IMPORTS the function's module (from the project's pythonPath or the installed packages),
    so its top-level code runs.

    The input schema comes from the signature and type hints (Literal, Enum, Optional,
    Annotated with Field, TypedDict, dataclasses, pydantic models, lists, dicts, defaults).

    Descriptions come from the docstring (Google, NumPy or reST style), the output schema from
    the return annotation. A tests stub is included.

    What the function does not say (an untyped parameter, *args, a type with no JSON form) is
    reported as a gap: the files are written with TODO lines and the exit code is 1. Existing
    files are kept unless --force.
    """
    from toolctl.cli import exitcodes
    from toolctl.cli.render import note
    from toolctl.config import CONFIG_NAME, project_at, project_for
    from toolctl.scaffold.newtool import plan_from_function, write_files

    if registry is not None and (registry / CONFIG_NAME).is_file():
        project = project_at(registry)
    else:
        project = project_for(registry)
    annotations = None
    if read_only is not None:
        annotations = (
            {"readOnlyHint": True}
            if read_only
            else {
                "readOnlyHint": False,
                "destructiveHint": True,
            }
        )
    plan = plan_from_function(
        source,
        project,
        output=output,
        name=name,
        handler_dir=handler_dir,
        annotations=annotations,
    )
    for path in write_files(plan.files, force=force):
        typer.echo(f"wrote {_shown(path)}")
    for text in plan.notes:
        typer.echo(f"toolctl: note: {text}", err=True)
    gaps = plan.draft.gaps if plan.draft else []
    for gap in gaps:
        typer.echo(f"toolctl: gap: {gap}", err=True)
    if gaps:
        typer.echo(
            f"{len(gaps)} gap(s): fill in the TODO lines, then run toolctl validate", err=True
        )
        raise typer.Exit(exitcodes.FINDINGS)
    note("next: fill in the tests: case, then toolctl validate && toolctl lint")


def _shown(path: Path) -> str:
    from toolctl.yamlsrc import real_path

    try:
        return real_path(path).relative_to(real_path(Path.cwd())).as_posix()
    except ValueError:
        return str(path)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("new")(new)
