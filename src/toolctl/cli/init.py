"""``toolctl init``: create a working project."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer


def init(
    directory: Annotated[
        Path,
        typer.Argument(metavar="DIR", help="Where to create the project (created if missing)."),
    ] = Path("."),
    force: Annotated[
        bool,
        typer.Option("--force", help="Overwrite the files init creates when they exist already."),
    ] = False,
) -> None:
    """Create a toolctl project: toolctl.yaml, tools.d/ with an example tool, its handler module
    and tests, the format's JSON Schema for editors, and a .gitignore entry for .toolctl/.

    Never overwrites a file unless --force: when any of them exists, nothing is written and the
    exit code is 2. `toolctl validate && toolctl test` pass in the new project.
    """
    from toolctl.cli.render import note
    from toolctl.scaffold.project import init_project
    from toolctl.yamlsrc import real_path

    root = real_path(directory)
    written = init_project(root, force=force)
    for path in written:
        typer.echo(f"created {path.relative_to(root).as_posix()}")
    where = "" if root == real_path(Path.cwd()) else f"cd {directory} && "
    note(f"next: {where}toolctl validate && toolctl test")


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("init")(init)
