"""Rank a registry's enabled tools for a natural-language query (``toolctl search``).

>>> hits = search(registry, "what's the weather in Paris", k=5)
>>> [(h.name, h.score) for h in hits]        # best first; [] means no tool fits

Ranking fuses a lexical score (BM25F over the words of each tool's name, description,
parameters and toolset description) with the cosine of a static embedding model's vectors when
the ``search`` extra is installed (``pip install 'toolctl-registry[search]'``; see
:mod:`toolctl.search.embed`), and abstains when a small model fitted on held-apart data says
no tool fits (:mod:`toolctl.search.decide`). Without the extra, ranking is lexical only
(:func:`semantic_available` says which).

The index of a registry is built once per process (:func:`index`), and with ``cache=True`` (the
CLI's default) kept in the load cache (:mod:`toolctl.search.store`).
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.search import embed, store
from toolctl.search.docs import tool_fields
from toolctl.search.index import Hit, SearchIndex

if TYPE_CHECKING:
    from toolctl.config import Project
    from toolctl.registry import Registry
    from toolctl.spec.model import ToolSpec

__all__ = ["Hit", "SearchIndex", "index", "search", "search_many", "semantic_available"]

DEFAULT_K = 5

# one index per live registry: serve --search asks per call (dropped with the registry)
_built: dict[int, tuple[weakref.ref[Any], SearchIndex]] = {}


def semantic_available() -> bool:
    """True when the embedding model is installed (``toolctl-registry[search]``)."""
    return embed.load() is not None


def _toolset_description(spec: ToolSpec, project: Project | None) -> str | None:
    name = spec.raw.get("toolset")
    toolsets = project.settings.get("toolsets") if project is not None else None
    if not isinstance(name, str) or not isinstance(toolsets, Mapping):
        return None
    entry = toolsets.get(name)
    text = entry.get("description") if isinstance(entry, Mapping) else None
    return text if isinstance(text, str) else None


def documents(registry: Registry) -> tuple[list[str], list[dict[str, str]]]:
    """The names and searchable fields of ``registry``'s enabled tools, in name order."""
    specs = registry.select()
    docs = [
        tool_fields(
            s.name,
            s.description,
            s.raw.get("inputSchema"),  # as written: a $ref'd file is not read for search
            _toolset_description(s, registry.project),
            s.title,
        )
        for s in specs
    ]
    return [s.name for s in specs], docs


def _build(registry: Registry, cache: bool, write: bool = True) -> tuple[SearchIndex, str]:
    names, docs = documents(registry)
    embedder = embed.load()
    key = store.content_key(names, docs, embed.MODEL if embedder else None)
    project = registry.project
    record = store.read(project) if cache and project is not None else None
    kept = store.from_record(record) if record is not None else None
    if kept is not None and record is not None and record.get("content") == key:
        return kept, key
    # the tools whose text did not change keep their vectors: only the rest are encoded
    known = kept.known() if kept is not None and kept.model == embed.MODEL else None
    built = SearchIndex.build(names, docs, embedder, known)
    if cache and write and project is not None:
        store.write(project, store.to_record(built, content=key, fingerprint=None, errors=0))
    return built, key


def index(registry: Registry, *, cache: bool | None = None) -> SearchIndex:
    """The search index of ``registry``'s enabled tools, built once per registry.

    ``cache`` (default: the load cache setting, on in the CLI) also keeps it in the load
    cache, so another process with the same tools reuses it.
    """
    from toolctl.cache import DEFAULTS

    memo = _built.get(id(registry))
    if memo is not None and memo[0]() is registry:
        return memo[1]
    built, _ = _build(registry, DEFAULTS.cache if cache is None else cache)
    key = id(registry)
    _built[key] = (weakref.ref(registry, lambda _: _built.pop(key, None)), built)
    return built


def _check(query: str, k: int) -> None:
    if not isinstance(query, str) or not query.strip():
        raise ValueError("the query is empty: give a few words saying what the tool should do")
    if k < 1:
        raise ValueError(f"k must be at least 1, got {k}")


def search(registry: Registry, query: str, k: int = DEFAULT_K) -> list[Hit]:
    """The enabled tools that best fit ``query``, best first, at most ``k``; an empty list
    when none fits (abstain rather than guess). Raises ValueError for an empty query or k < 1."""
    _check(query, k)
    found = index(registry)
    return found.query(query, k, embed.load() if found.semantic else None)


def search_many(registry: Registry, queries: Iterable[str], k: int = DEFAULT_K) -> list[list[Hit]]:
    """:func:`search` for each query, in order, over one index."""
    return [search(registry, q, k) for q in queries]


def project_index(project: Project, *, packs: bool = True) -> tuple[SearchIndex, int]:
    """The index of ``project``'s registry and how many errors loading it had: from the load
    cache without loading a tool file when none changed (see :mod:`toolctl.search.store`),
    else loaded, built and kept. What ``toolctl search`` uses."""
    from toolctl.discovery import source_files  # not the loader: a warm search loads nothing

    model = embed.MODEL if embed.available() else None
    record = store.read(project)
    if record is not None:
        kept = [Path(d) for d in record.get("packDirs") or [] if isinstance(d, str)]
        files = source_files(project, kept if packs else [])
        if record.get("fingerprint") == store.fingerprint(project, files, packs, model):
            found = store.from_record(record, keys=False)  # a lookup: no rebuild reads them
            if found is not None:
                return found, int(record.get("errors") or 0)
    from toolctl.loader import load_registry, pack_directories

    registry = load_registry(project=project, packs=packs, cache=True)
    errors = sum(d.severity.value == "error" for d in registry.diagnostics)
    built, key = _build(registry, cache=True, write=False)
    dirs = pack_directories(project) if packs else []
    fingerprint = store.fingerprint(project, source_files(project, dirs), packs, model)
    record = store.to_record(
        built,
        content=key,
        fingerprint=fingerprint,
        errors=errors,
        packDirs=[str(d) for d in dirs],
    )
    store.write(project, record)
    return built, errors
