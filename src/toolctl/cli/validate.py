"""``toolctl validate`` and ``toolctl schema``."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolctl.cli.options import (
    FormatOpt,
    OutputFormat,
    PacksOpt,
    PathsArg,
    RegistryOpt,
    output_option,
)


def validate(
    paths: PathsArg = None,
    registry: RegistryOpt = None,
    fmt: FormatOpt = OutputFormat.text,
    packs: PacksOpt = True,
) -> None:
    """Check every tool file: format, schemas, $refs, examples, tests and handler references.

    Reports every problem in every file as `file:line:col: error CODE message`. Never imports or
    runs user code. Exit 0 when clean, 1 when anything is wrong.
    """
    from toolctl.cli import validating

    raise typer.Exit(validating.run(paths, registry, fmt, packs))


def schema(
    output: Annotated[Path | None, output_option()] = None,
) -> None:
    """Print the JSON Schema of the tool file format (for editors and CI)."""
    import json

    from toolctl.cli.render import note, write_output
    from toolctl.spec import format_schema

    write_output(json.dumps(format_schema(), indent=2) + "\n", output)
    if output is not None:
        note(f"wrote {output}")


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("validate")(validate)
    app.command("schema")(schema)
