"""The work of ``toolctl search`` once its options are parsed, without Typer: the Typer command
(:mod:`toolctl.cli.search`) and the quick path (:mod:`toolctl.cli.quick`) both call :func:`run`."""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from toolctl.cli import exitcodes
from toolctl.cli.choices import OutputFormat

if TYPE_CHECKING:
    from toolctl.search import Hit, SearchIndex

LEXICAL_NOTE = (
    "note: lexical ranking only (no embedding model installed): "
    "pip install 'toolctl-registry[search]' for better ranking"
)
# a query echoed as a batch heading reaches a terminal: its control characters (an escape
# sequence in a queries file) are shown, not obeyed
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def _index(registry: Path | None, packs: bool) -> tuple[SearchIndex, int]:
    from toolctl.cache import DEFAULTS
    from toolctl.cli.targets import project_of
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


def _text(query: str, hits: list[Hit]) -> str:
    """The plain table of ``hits`` (empty, with a note on stderr, when none fits)."""
    from toolctl.cli.render import note

    if not hits:
        note(f"no tool fits {query!r}")
        return ""
    # plain columns: tool names are identifiers (no markup, no control characters), and rich's
    # import would be a third of a warm search
    width = max(len("name"), *(len(h.name) for h in hits))
    lines = [f"{'name':<{width}}  score"] + [f"{h.name:<{width}}  {h.score:.3f}" for h in hits]
    return "\n".join(lines) + "\n"


def _heading(query: str) -> str:
    return "# " + _CONTROL.sub(lambda m: repr(m.group())[1:-1], query) + "\n"


def _texts(query: str | None, queries: Path | None) -> list[str]:
    """The queries to rank: ``query`` or the lines of ``queries`` (exactly one is given)."""
    from toolctl.errors import UsageError

    if (query is None) == (queries is None):
        raise UsageError(
            "give one QUERY or --queries FILE.jsonl",
            hint="toolctl search 'send an email'  or  toolctl search --queries q.jsonl -f json",
        )
    if queries is not None:
        from toolctl.search.queries import read_queries

        return read_queries(queries)
    if not str(query).strip():
        raise UsageError(
            "the query is empty", hint="give a few words saying what the tool should do"
        )
    return [str(query)]


def run(
    query: str | None = None,
    k: int = 5,
    queries: Path | None = None,
    registry: Path | None = None,
    fmt: OutputFormat = OutputFormat.text,
    packs: bool = True,
) -> int:
    """Rank the registry's enabled tools for ``query`` (or each line of ``queries``), print
    the results in ``fmt``; the exit code (1 when the registry has errors)."""
    from toolctl.cli.render import note
    from toolctl.search import embed

    texts = _texts(query, queries)
    found, errors = _index(registry, packs)
    embedder = embed.load() if found.semantic else None
    if not found.semantic:
        note(LEXICAL_NOTE)
    if errors:
        note(f"{errors} error(s) in the registry left tools out; toolctl validate says which")
    for text in texts:
        hits = found.query(text, k, embedder)
        if fmt is OutputFormat.json:
            from toolctl.cli.render import print_json

            print_json(_result(text, hits), indent=None if queries is not None else 2)
        else:
            heading = _heading(text) if queries is not None else ""
            sys.stdout.write(heading + _text(text, hits))
    return exitcodes.FINDINGS if errors else exitcodes.OK
