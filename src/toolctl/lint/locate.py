"""Locating a finding: inside the tool file, or inside the shared schema file it came from.

Schemas are bundled: a ``$ref`` to ``schemas/common.schema.yaml#/$defs/Id`` becomes a local
``#/$defs/<name>`` whose body exists only in the bundled schema. A finding inside such a body is
placed where that body is written, in the shared file, so the user fixes (and can ignore) it
there; the same finding from several tools then collapses into one.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from toolctl.cache import remembered_document
from toolctl.diagnostics import Location
from toolctl.errors import YamlError
from toolctl.refs import iter_refs, parse_pointer, resolve_pointer
from toolctl.spec.model import SCHEMA_KEYS, ToolSpec
from toolctl.yamlsrc import Document, JsonPath

_MISSING = object()


def _get(node: Any, path: Sequence[str | int]) -> Any:
    try:
        return resolve_pointer(node, [str(p) for p in path])
    except KeyError:
        return _MISSING


def _document(path: str) -> Document | None:
    """The shared file at ``path`` as parsed, once per run while its size and modification
    time hold (a process that lints again after the file changed must not report old lines)."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return _document_as(path, stat.st_size, stat.st_mtime_ns)


@functools.lru_cache(maxsize=64)
def _document_as(path: str, size: int, mtime: int) -> Document | None:
    try:
        return remembered_document(Path(path), path)
    except YamlError:
        return None


def _bundled_def(tool: ToolSpec, path: JsonPath) -> tuple[int, str] | None:
    """(index of ``$defs`` in ``path``, def name) when ``path`` runs into a bundled-in def."""
    if not path or path[0] not in SCHEMA_KEYS:
        return None
    raw = tool.raw.get(str(path[0]))
    for i in range(1, len(path) - 1):
        if path[i] == "$defs" and _get(raw, path[1 : i + 2]) is _MISSING:
            return i, str(path[i + 1])
    return None


def _source(tool: ToolSpec, key: str, name: str) -> tuple[str, str] | None:
    """(file, fragment) of the external ``$ref`` that was bundled as ``#/$defs/name``."""
    bundled = tool.schema(key)
    for site, ref in iter_refs(tool.raw.get(key)):
        external = "#" in ref and not ref.startswith("#")
        if external and _get(bundled, (*site, "$ref")) == f"#/$defs/{name}":
            file, _, fragment = ref.partition("#")
            return file, fragment
    return None


def locate(tool: ToolSpec, path: JsonPath, key: bool) -> tuple[Location, JsonPath | str]:
    """Where ``path`` of ``tool`` is written, and the pointer to report with it."""
    found = _bundled_def(tool, path)
    source = _source(tool, str(path[0]), found[1]) if found else None
    if found is None or source is None or tool.document is None:
        return tool.locate(*path, key=key), path
    file, fragment = source
    display = str(Path(tool.location.file).parent / file)
    doc = _document(display)
    if doc is None:
        return tool.locate(*path, key=key), path
    try:
        tokens: list[str | int] = list(parse_pointer(fragment))
    except ValueError:
        return tool.locate(*path, key=key), path
    inner = (*tokens, *path[found[0] + 2 :])
    line, col = doc.locate(inner, key=key)
    pointer = file + "#" + "".join(f"/{p}" for p in inner)
    return Location(display, line, col), pointer
