"""Ranking the registry's tools for a natural-language query: ``search(registry, query, k)``.

PLACEHOLDER: this simple word-overlap ranking stands in for the ranking engine the ``search``
branch builds (lexical + embedding fusion, calibrated abstention); at merge that branch's
``toolctl.search`` replaces this file. The API is the agreed one:
``search(registry, query: str, k: int = 5) -> list[Hit]``, best first, empty = abstain.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolctl.registry import Registry
    from toolctl.spec import ToolSpec

__all__ = ["Hit", "search"]

_WORD = re.compile(r"[A-Za-z][a-z]*|[0-9]+")


@dataclass(frozen=True)
class Hit:
    """One ranked tool: its name and a score (higher is better)."""

    name: str
    score: float


def _words(text: str) -> set[str]:
    # snake_case, kebab-case and camelCase names split into their words
    return {w.lower() for w in _WORD.findall(text)}


def _score(query: set[str], spec: ToolSpec) -> float:
    name = _words(spec.name)
    text = _words(spec.description) | _words(spec.title or "")
    # a word of the name counts double: names say what a tool does most briefly
    return 2.0 * len(query & name) + len(query & text)


def search(registry: Registry, query: str, k: int = 5) -> list[Hit]:
    """The enabled tools best matching ``query``, best first, at most ``k``; empty when no
    tool shares a word with the query (abstain rather than guess)."""
    words = _words(query)
    if not words or k < 1:
        return []
    exact = query.strip()
    hits = []
    for spec in registry.select():
        score = 100.0 if spec.name == exact else _score(words, spec)
        if score > 0:
            hits.append(Hit(spec.name, score))
    hits.sort(key=lambda h: (-h.score, h.name))
    return hits[:k]
