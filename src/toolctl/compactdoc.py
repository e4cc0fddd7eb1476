"""A loaded tool file whose positions take 16 bytes per node instead of two dict entries.

While a file is checked, its :class:`~toolctl.yamlsrc.Document` maps a path key per node to a
position (about 200 bytes per node with the key string, the int and the dict slot): at 10,000
tools that is most of the memory of ``validate``. Once checked, the positions are rarely needed
again (lint and export findings, test locations), so :meth:`CompactDocument.compact` keeps
them as two arrays in document order, and :meth:`~CompactDocument.locate` finds a path's
index in them by walking the data. The same arrays are what the load cache stores.

The builder inserts positions in document order (pre-order: a node, then for a mapping each
key and its value), and ``data`` keeps that order, so the arrays need no keys: a node's index
is one past its parent's plus the sizes of the subtrees of the siblings before it.
"""

from __future__ import annotations

from array import array
from typing import Any

from toolctl.yamlsrc import Document, JsonPath, _unpack


class CompactDocument(Document):
    """A :class:`Document` that can keep its positions as arrays (same :meth:`locate`)."""

    _values: array[int] | None = None
    _keys: array[int] | None = None
    _sizes: dict[int, tuple[int, int]]
    _located: dict[tuple[JsonPath, bool], tuple[int, int]]

    @classmethod
    def adopt(cls, doc: Document) -> CompactDocument:
        """The same document (its data and dicts, not copied) as a compactable one."""
        return cls(doc.data, doc.file, doc.positions, doc.key_positions)

    @classmethod
    def from_arrays(
        cls, data: Any, file: str, values: array[int], keys: array[int]
    ) -> CompactDocument:
        """A compact document from stored arrays (see :meth:`arrays`)."""
        doc = cls(data, file)
        doc._values, doc._keys, doc._sizes, doc._located = values, keys, {}, {}
        return doc

    def arrays(self) -> tuple[array[int], array[int]]:
        """The positions as (values, keys) arrays in document order."""
        if self._values is not None and self._keys is not None:
            return self._values, self._keys
        return array("Q", self.positions.values()), array("Q", self.key_positions.values())

    def compact(self) -> None:
        """Keep the positions as arrays only (the data must not change from now on)."""
        if self._values is None:
            self._values, self._keys = self.arrays()
            self.positions, self.key_positions = {}, {}
            self._sizes, self._located = {}, {}

    def locate(self, path: JsonPath, *, key: bool = False) -> tuple[int, int]:
        if self._values is None or self._keys is None:
            return super().locate(path, key=key)
        if not self._values:
            return (1, 1)
        memo = (tuple(path), key)
        found = self._located.get(memo)
        if found is None:  # exporters locate the same few paths once per provider: remember
            value, key_at = self._find(path)
            packed = self._keys[key_at] if key and key_at is not None else self._values[value]
            found = self._located[memo] = _unpack(packed)
        return found

    def _find(self, path: JsonPath) -> tuple[int, int | None]:
        """(index in the value array of the deepest node of ``path`` that exists, index in
        the key array of its mapping key when that node is the whole ``path``).

        Pre-order: a node's children start one value after it; each earlier sibling's subtree
        (its size memoised) comes before. Only the siblings before each step are counted.
        """
        node, value, key_index = self.data, 0, 0  # key_index: keys before node's children
        for depth, part in enumerate(path):
            text = str(part)
            if type(node) is dict:
                if text not in node:
                    break
                child_value, child_keys = value + 1, key_index
                for name, child in node.items():
                    if name == text:
                        break
                    size, keys = self._size(child)
                    child_value, child_keys = child_value + size, child_keys + 1 + keys
                node, value, key_index = node[text], child_value, child_keys + 1
                found_key = child_keys if depth == len(path) - 1 else None
            elif type(node) is list and text.isdigit() and str(int(text)) == text:
                if int(text) >= len(node):
                    break
                child_value, child_keys = value + 1, key_index
                for child in node[: int(text)]:
                    size, keys = self._size(child)
                    child_value, child_keys = child_value + size, child_keys + keys
                node, value, key_index = node[int(text)], child_value, child_keys
                found_key = None
            else:
                break
        else:
            return value, found_key if path else None
        return value, None

    def _size(self, node: Any) -> tuple[int, int]:
        """(values, keys) in the subtree of ``node``, memoised per container."""
        if type(node) is not dict and type(node) is not list:
            return 1, 0
        memo = self._sizes
        found = memo.get(id(node))
        if found is None:
            values, keys = 1, 0
            children = node.values() if type(node) is dict else node
            for child in children:
                size, inner = self._size(child)
                values, keys = values + size, keys + inner
            if type(node) is dict:
                keys += len(node)
            found = memo[id(node)] = (values, keys)
        return found
