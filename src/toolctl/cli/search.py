"""``toolctl search``: rank the enabled tools for a natural-language query, without running any.

The work is :func:`toolctl.cli.searching.run` (a plain command line reaches it without Typer,
see :mod:`toolctl.cli.quick`); this module declares the command for Typer."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from toolctl.cli import searching
from toolctl.cli.choices import SEARCH_K_MAX
from toolctl.cli.options import FormatOpt, OutputFormat, PacksOpt, RegistryOpt


def search(
    query: Annotated[
        str | None,
        typer.Argument(
            metavar="QUERY", help="What the tool should do, in plain words.", show_default=False
        ),
    ] = None,
    k: Annotated[
        int,
        typer.Option(
            "-k", metavar="N", min=1, max=SEARCH_K_MAX, help="At most N tools (default 5)."
        ),
    ] = 5,
    queries: Annotated[
        Path | None,
        typer.Option(
            "--queries",
            metavar="FILE.jsonl",
            help='Rank each {"query": ...} line of FILE; one result object per line, in order.',
            show_default=False,
        ),
    ] = None,
    registry: RegistryOpt = None,
    fmt: FormatOpt = OutputFormat.text,
    packs: PacksOpt = True,
) -> None:
    """Rank the enabled tools for a natural-language query, best first.

    Nothing is run or imported. No result means no tool fits (search abstains rather than
    guess). JSON: {"query": ..., "results": [{"name", "score"}]}. The index is kept in the
    load cache: a search with no tool file changed loads none.

    Exit 0, 1 when the registry has errors (the tools that loaded are still searched), 2 for
    a usage error (no query, a bad queries file).
    """
    raise typer.Exit(searching.run(query, k, queries, registry, fmt, packs))


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("search")(search)
