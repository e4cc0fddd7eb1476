"""A compacted document locates every path exactly as the document it came from."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from toolctl.compactdoc import CompactDocument
from toolctl.yamlsrc import JsonPath, loads

from .conftest import REPO

DOCS = {
    "empty": "",
    "scalar": "just text\n",
    "nested": "a:\n  b: [1, {c: 2, d: [x, y]}]\n  e: {}\nf: []\n'0': zero\n",
    "flow": "{x: [[], [{}], [1, [2, [3]]]], y: {z: {w: null}}}\n",
}
DOCS.update({p.name: p.read_text("utf-8") for p in sorted((REPO / "tools.d").rglob("*.yaml"))})


def _paths(node: Any, prefix: JsonPath = ()) -> Iterator[JsonPath]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


@pytest.mark.parametrize("name", sorted(DOCS))
def test_compact_document_locates_like_the_full_one(name: str) -> None:
    full = loads(DOCS[name], name)
    compact = CompactDocument.adopt(loads(DOCS[name], name))
    compact.compact()
    assert compact.positions == {} and compact.key_positions == {}
    written = list(_paths(full.data))
    missing = [(*p, tail) for p in written for tail in ("nope", 7, "0", "01")]
    for path in written + missing + [(0, "x", 3)]:
        for key in (False, True):
            assert compact.locate(path, key=key) == full.locate(path, key=key), (path, key)


def test_stored_arrays_rebuild_the_same_document(tmp_path: Path) -> None:
    text = DOCS["nested"]
    full = loads(text, "t.yaml")
    values, keys = CompactDocument.adopt(loads(text, "t.yaml")).arrays()
    again = CompactDocument.from_arrays(full.data, "t.yaml", values, keys)
    for path in _paths(full.data):
        assert again.locate(path, key=True) == full.locate(path, key=True)
