"""A loaded document locates every path where libyaml's own node tree says it starts.

The positions are kept as arrays of offsets in document order (no key per node): these tests check
them against an independent oracle, PyYAML's composed node tree with its marks.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from toolctl.errors import YamlError
from toolctl.yamlsrc import Document, JsonPath, loads

from .conftest import REPO

DOCS = {
    "empty": "",
    "scalar": "just text\n",
    "nested": "a:\n  b: [1, {c: 2, d: [x, y]}]\n  e: {}\nf: []\n'0': zero\n",
    "flow": "{x: [[], [{}], [1, [2, [3]]]], y: {z: {w: null}}}\n",
    # positions are character offsets turned into line and column by the line starts: every
    # line break libyaml counts, and characters outside the BMP, must give its line and column
    "crlf": "a:\r\n  b: [1, 2]\r\n  c: {d: x}\r\ne: y\r\n",
    "breaks": 'a: "x\u2028y"\rb: "p\u2029q\x85r"\nc:\x85  - 1\x85  - "😀 \u2028 z"\nd: 😀😀\n',
    "wide": "😀k: [😀, {😀x: 2}]\nz: 'a\tb'  # \t😀\ny: é\n",
    "bom": "\ufeffa: 1\nb: [x, y]\n",
}
DOCS.update({p.name: p.read_text("utf-8") for p in sorted((REPO / "tools.d").rglob("*.yaml"))})

Where = dict[JsonPath, tuple[tuple[int, int], tuple[int, int] | None]]


def _oracle(node: yaml.Node | None, path: JsonPath = (), out: Where | None = None) -> Where:
    """Every path's (value position, key position or None), from PyYAML's composed nodes."""
    out = {} if out is None else out
    if node is None:
        return out
    mark = (node.start_mark.line + 1, node.start_mark.column + 1)
    out.setdefault(path, (mark, None))
    if isinstance(node, yaml.MappingNode):
        for key_node, value_node in node.value:
            key_mark = (key_node.start_mark.line + 1, key_node.start_mark.column + 1)
            child = (*path, key_node.value)
            value_mark = (value_node.start_mark.line + 1, value_node.start_mark.column + 1)
            out[child] = (value_mark, key_mark)
            _oracle(value_node, child, out)
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _oracle(item, (*path, i), out)
    return out


def _paths(node: Any, prefix: JsonPath = ()) -> Iterator[JsonPath]:
    yield prefix
    if isinstance(node, dict):
        for key, value in node.items():
            yield from _paths(value, (*prefix, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _paths(value, (*prefix, i))


def _as_written(data: Any, path: JsonPath) -> JsonPath:
    """``path`` with each step as the data holds it: "3" into a list is index 3, 3 into a
    mapping is the key "3"."""
    out: list[str | int] = []
    for part in path:
        text = str(part)
        if isinstance(data, list) and text.isdigit() and str(int(text)) == text:
            out.append(int(text))
            data = data[int(text)] if int(text) < len(data) else None
        else:
            out.append(text)
            data = data.get(text) if isinstance(data, dict) else None
    return tuple(out)


def _expected(where: Where, data: Any, path: JsonPath, key: bool) -> tuple[int, int]:
    """The oracle's answer: the path's own position, else its nearest written ancestor's."""
    if not where:
        return (1, 1)
    path = _as_written(data, path)
    for cut in range(len(path), -1, -1):
        found = where.get(path[:cut])
        if found is not None:
            value, key_at = found
            return key_at if key and key_at is not None and cut == len(path) else value
    raise AssertionError(path)  # pragma: no cover - the root is always written


@pytest.mark.parametrize("name", sorted(DOCS))
def test_every_path_is_located_where_libyaml_puts_it(name: str) -> None:
    doc = loads(DOCS[name], name)
    where = _oracle(yaml.compose(DOCS[name], Loader=yaml.SafeLoader))
    written = list(_paths(doc.data))
    missing = [(*p, tail) for p in written for tail in ("nope", 7, "0", "01")]
    for path in written + missing + [(0, "x", 3)]:
        for key in (False, True):
            assert doc.locate(path, key=key) == _expected(where, doc.data, path, key), (path, key)


def test_stored_arrays_rebuild_the_same_document(tmp_path: Path) -> None:
    text = DOCS["nested"]
    full = loads(text, "t.yaml")
    again = Document(full.data, "t.yaml", *loads(text, "t.yaml").positions())
    for path in _paths(full.data):
        assert again.locate(path, key=True) == full.locate(path, key=True)


@pytest.mark.parametrize(
    ("text", "line"),
    [
        ("a: 1\nb: 2\na: 3\n", 1),
        ("x:\n  - {p: 1}\n  - q: 1\n    r:\n      s: 1\n      s: 2\n", 5),
        ("top:\n  one: [1, 2, {k: v}]\n  two:\n    k: v\n    j: w\n    k: again\n", 4),
    ],
)
def test_a_duplicate_key_names_the_line_of_the_first(text: str, line: int) -> None:
    with pytest.raises(YamlError) as err:
        loads(text, "t.yaml")
    assert err.value.code == "TC104"
    assert f"first defined at line {line})" in err.value.message


def test_released_document_still_locates_everything() -> None:
    """The loader releases a checked file's lookup memos (memory at 10,000 tools): later
    findings are located as before."""
    doc = loads(DOCS["nested"], "t.yaml")
    paths = list(_paths(doc.data))
    before = [doc.locate(p, key=k) for p in paths for k in (False, True)]
    doc.release()
    assert doc.key_names is None
    assert [doc.locate(p, key=k) for p in paths for k in (False, True)] == before
