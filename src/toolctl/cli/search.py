"""``toolctl search``: rank the enabled tools for a natural-language query, without running any."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from toolctl.cli import exitcodes
from toolctl.cli.options import FormatOpt, OutputFormat, PacksOpt, RegistryOpt

if TYPE_CHECKING:
    from toolctl.search import Hit, SearchIndex

LEXICAL_NOTE = (
    "note: lexical ranking only (no embedding model installed): "
    "pip install 'toolctl-registry[search]' for better ranking"
)


def _index(registry: Path | None, packs: bool) -> tuple[SearchIndex, int]:
    from toolctl.cache import DEFAULTS
    from toolctl.cli.options import project_of
    from toolctl.search import index, project_index

    project = project_of(registry)
    if DEFAULTS.cache:
        return project_index(project, packs=packs)
    from toolctl.loader import load_registry

    loaded = load_registry(project=project, packs=packs)
    errors = sum(d.severity.value == "error" for d in loaded.diagnostics)
    return index(loaded, cache=False), errors


def _result(query: str, hits: list[Hit]) -> dict[str, object]:
    return {"query": query, "results": [{"name": h.name, "score": h.score} for h in hits]}


def _print_text(query: str, hits: list[Hit]) -> None:
    from toolctl.cli.render import note

    if not hits:
        note(f"no tool fits {query!r}")
        return
    # plain columns: tool names are identifiers (no markup, no control characters), and rich's
    # import would be a third of a warm search
    width = max(len("name"), *(len(h.name) for h in hits))
    lines = [f"{'name':<{width}}  score"] + [f"{h.name:<{width}}  {h.score:.3f}" for h in hits]
    typer.echo("\n".join(lines))


def search(
    query: Annotated[
        str | None,
        typer.Argument(
            metavar="QUERY", help="What the tool should do, in plain words.", show_default=False
        ),
    ] = None,
    k: Annotated[
        int, typer.Option("-k", metavar="N", min=1, max=1000, help="At most N tools (default 5).")
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
    from toolctl.cli.render import note, print_json
    from toolctl.errors import UsageError
    from toolctl.search import embed
    from toolctl.search.queries import read_queries

    if (query is None) == (queries is None):
        raise UsageError(
            "give one QUERY or --queries FILE.jsonl",
            hint="toolctl search 'send an email'  or  toolctl search --queries q.jsonl -f json",
        )
    if query is not None and not query.strip():
        raise UsageError(
            "the query is empty", hint="give a few words saying what the tool should do"
        )
    texts = read_queries(queries) if queries is not None else [str(query)]
    found, errors = _index(registry, packs)
    embedder = embed.load() if found.semantic else None
    if not found.semantic:
        note(LEXICAL_NOTE)
    if errors:
        note(f"{errors} error(s) in the registry left tools out; toolctl validate says which")
    for text in texts:
        hits = found.query(text, k, embedder)
        if fmt is OutputFormat.json:
            print_json(_result(text, hits), indent=None if queries is not None else 2)
        else:
            if queries is not None:
                typer.echo(f"# {text}")
            _print_text(text, hits)
    raise typer.Exit(exitcodes.FINDINGS if errors else exitcodes.OK)


def register(app: typer.Typer) -> None:
    """Add this module's commands to ``app``."""
    app.command("search")(search)
