"""A loaded tool file whose positions take 16 bytes per node instead of two dict entries.

While a file is checked, its :class:`~toolctl.yamlsrc.Document` maps a path key per node to a
position (about 200 bytes per node with the key string, the int and the dict slot): at 10,000
tools that is most of the memory of ``validate``. Once checked, the positions are rarely needed
again (lint and export findings, test locations), so :meth:`CompactDocument.compact` keeps
them as two arrays in document order and :meth:`~CompactDocument.locate` rebuilds the dicts
from the data the first time it is asked. The same arrays are what the load cache stores.

The builder inserts positions in document order (pre-order: a node, then for a mapping each
key and its value), and ``data`` keeps that order, so the arrays need no keys: a walk of the
data in the same order gives each entry its path key back.
"""

from __future__ import annotations

from array import array
from typing import Any

from toolctl.yamlsrc import _SEP, Document, JsonPath


class CompactDocument(Document):
    """A :class:`Document` that can drop its position dicts and rebuild them on demand."""

    _values: array[int] | None = None
    _keys: array[int] | None = None

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
        doc._values, doc._keys = values, keys
        return doc

    def arrays(self) -> tuple[array[int], array[int]]:
        """The positions as (values, keys) arrays in document order."""
        if self._values is not None and self._keys is not None:
            return self._values, self._keys
        return array("Q", self.positions.values()), array("Q", self.key_positions.values())

    def compact(self) -> None:
        """Keep the positions as arrays only (the dicts come back on the next locate)."""
        if self._values is None:
            self._values, self._keys = self.arrays()
            self.positions, self.key_positions = {}, {}

    def locate(self, path: JsonPath, *, key: bool = False) -> tuple[int, int]:
        if self._values is not None:
            self._expand()
        return super().locate(path, key=key)

    def _expand(self) -> None:
        values, keys = self._values, self._keys
        self._values = self._keys = None
        assert values is not None and keys is not None
        positions: dict[str, int] = {}
        key_positions: dict[str, int] = {}
        next_value, next_key = iter(values).__next__, iter(keys).__next__
        # (node, its path key, whether it is a mapping value: its key position comes first)
        stack: list[tuple[Any, str, bool]] = [(self.data, "", False)]
        try:
            while stack:
                node, path, keyed = stack.pop()
                if keyed:
                    key_positions[path] = next_key()
                positions[path] = next_value()
                if type(node) is dict:
                    stack.extend(
                        (child, f"{path}{_SEP}{name}", True)
                        for name, child in reversed(node.items())
                    )
                elif type(node) is list:
                    stack.extend(
                        (node[i], f"{path}{_SEP}{i}", False) for i in range(len(node) - 1, -1, -1)
                    )
        except StopIteration:  # data and positions disagree: whole-file locations only
            positions, key_positions = {}, {}
        self.positions, self.key_positions = positions, key_positions
