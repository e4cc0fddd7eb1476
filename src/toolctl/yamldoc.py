"""A loaded YAML file (:class:`Document`: its data and where each part was written) and the
limits every YAML load applies. Its own module so that the parser (:mod:`toolctl.yamlparse`)
and the reading side (:mod:`toolctl.yamlsrc`, which re-exports these) do not import each other.
"""

from __future__ import annotations

import re
from array import array
from bisect import bisect_right
from itertools import accumulate
from pathlib import Path
from typing import Any

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_INT_DIGITS = 4000

JsonPath = tuple[str | int, ...]


class Document:
    """A loaded file: the JSON-compatible ``data`` and where each part of it was written.

    Use :meth:`locate`. The positions are three arrays of character offsets into the text, in
    document order: one per value (every node, pre-order: a node, then for a mapping each key's
    value), one per mapping key, and where each line after the first starts. Offsets rather
    than lines and columns: the parser reads one number per node from libyaml (a line and a
    column cost two reads and the packing, a fifth of the parse), and the few paths located
    are turned into line and column by a binary search of the line starts. 4 bytes a node,
    no key and no tuple per node, nothing for the garbage collector to scan. The arrays need
    no keys because ``data`` keeps document order: a node's index is one past its parent's
    plus the sizes of the subtrees of the siblings before it (:meth:`_find`). ``data`` must
    not change after loading. The load cache stores the same arrays (:meth:`arrays`).

    A document the fast parser loaded (:mod:`toolctl.yamlfast`) has no positions until the
    first :meth:`locate`: its ``source``, the text (while the file is being checked) or the
    file's path (after :meth:`release`), is then parsed strictly for them. When that text no
    longer holds the same data (the file changed since), positions are unknown: line 0, the
    file as a whole.
    """

    __slots__ = (
        "_keys",
        "_lines",
        "_located",
        "_sizes",
        "_source",
        "_values",
        "data",
        "file",
        "key_names",
    )

    def __init__(
        self,
        data: Any,
        file: str = "",
        values: array[int] | None = None,
        keys: array[int] | None = None,
        lines: array[int] | None = None,
        *,
        source: str | Path | None = None,
    ) -> None:
        self.data = data
        self.file = file
        # where positions not read yet come from (see above); None: they are all here
        self._source: str | Path | None = source if values is None else None
        self._values: array[int] = values if values is not None else array("I")
        self._keys: array[int] = keys if keys is not None else array("I")
        self._lines: array[int] = lines if lines is not None else array("I")
        self._sizes: dict[int, tuple[int, int]] | None = None  # made when first needed
        self._located: dict[tuple[JsonPath, bool], tuple[int, int]] | None = None
        # every distinct mapping key in the file, as parsed (None when not known): lets the
        # checks skip a walk that looks for keys the file does not have ($ref, pattern)
        self.key_names: set[str] | None = None

    def arrays(self) -> tuple[array[int], array[int], array[int]] | None:
        """The positions as (values, keys, line starts) arrays of offsets, in document order;
        None when they have not been read (see above)."""
        if self._source is not None:
            return None
        return self._values, self._keys, self._lines

    def positions(self) -> tuple[array[int], array[int], array[int]]:
        """:meth:`arrays`, read from the source first when they have not been (empty arrays
        when they cannot be: see above)."""
        if self._source is not None:
            self._read_positions()
        return self._values, self._keys, self._lines

    def release(self) -> None:
        """Drop what checking the file needed and later lookups rarely do: the key names and
        the lookup memos (rebuilt on demand). At 10,000 tools the size memo alone, filled by
        locating each tool, would hold a tuple for every container of every file."""
        self.key_names = self._sizes = self._located = None

    def positions_from(self, path: Path) -> None:
        """Read positions not read yet from the file at ``path`` when asked, not from the text
        kept until now (dropped: a registry's documents would hold every file's text)."""
        if self._source is not None:
            self._source = path

    def _read_positions(self) -> None:
        """Parse the source strictly for the positions (see above); once."""
        source, self._source = self._source, None
        from toolctl.errors import YamlError
        from toolctl.yamlparse import parse

        try:
            if isinstance(source, Path):
                from toolctl.yamlsrc import read_text

                source = read_text(source)
            strict = parse(source or "")
        except YamlError:
            return
        if strict.data == self.data:
            self._values, self._keys, self._lines = strict._values, strict._keys, strict._lines

    def locate_root_value(self, key: str) -> tuple[int, int]:
        """:meth:`locate` of ``(key,)``; while the positions are not read, a key of the root
        mapping written ``key: value`` at the start of a line, its value a string on that
        line, is found in the text instead (each tool's ``name``: listing a registry would
        otherwise parse each file again)."""
        if self._source is not None and type(self.data) is dict:
            value = self.data.get(key)
            found = _root_value(self._text(), key, value) if type(value) is str else None
            if found is not None:
                return found
        return self.locate((key,))

    def _text(self) -> str | None:
        """The source's text (read from the file when it is a path), None when unreadable."""
        if isinstance(self._source, Path):
            from toolctl.errors import YamlError
            from toolctl.yamlsrc import read_text

            try:
                return read_text(self._source)
            except YamlError:
                return None
        return self._source

    def locate(self, path: JsonPath, *, key: bool = False) -> tuple[int, int]:
        """The 1-based (line, col) of ``path``, or of its nearest written ancestor (``key``:
        of its mapping key when ``path`` itself is a key of a mapping)."""
        if self._source is not None:
            self._read_positions()
            if not self._values and self.data is not None:
                return (0, 0)  # the file changed since: the file as a whole
        if not self._values:
            return (1, 1)
        memo = (tuple(path), key)
        if self._located is None:
            self._located = {}
        found = self._located.get(memo)
        if found is None:  # exporters locate the same few paths once per provider: remember
            value, key_at = self._find(path)
            offset = self._keys[key_at] if key and key_at is not None else self._values[value]
            found = self._located[memo] = self._line_col(offset)
        return found

    def _line_col(self, offset: int) -> tuple[int, int]:
        """The 1-based (line, column) of a character offset."""
        lines = self._lines
        before = bisect_right(lines, offset)  # lines that start at or before it, past the first
        return before + 1, offset - (lines[before - 1] if before else 0) + 1

    def _find(self, path: JsonPath) -> tuple[int, int | None]:
        """(index in the value array of the deepest node of ``path`` that exists, index in
        the key array of its mapping key when that node is the whole ``path``).

        Pre-order: a node's children start one value after it; each earlier sibling's subtree
        (its size memoised) comes before. Only the siblings before each step are counted.
        """
        node, value, key_index = self.data, 0, 0  # key_index: keys before node's children
        found_key: int | None = None
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
        """(values, keys) in the subtree of ``node``, memoised for the siblings a lookup
        counts, not for every container below them: an export locates a path or two of
        every tool, and a memo per container held a tuple for each one of the registry."""
        if type(node) is not dict and type(node) is not list:
            return 1, 0
        if self._sizes is None:
            self._sizes = {}
        found = self._sizes.get(id(node))
        if found is None:
            found = self._sizes[id(node)] = _count(node)
        return found


def _root_value(text: str | None, key: str, value: str) -> tuple[int, int] | None:
    """(line, col) of ``value`` written plain or quoted right after ``key:`` at the start of
    the only line of ``text`` that starts so (a second one would be text inside a multi-line
    scalar: a key of the root mapping is not written twice); None when it is not so written."""
    if text is None:
        return None
    starts = [m.end() for m in re.finditer(f"^{re.escape(key)}:[ ]+", text, re.MULTILINE)]
    if len(starts) != 1:
        return None
    at = starts[0]
    quote = text[at : at + 1]
    inner = at + 1 if quote in ("'", '"') else at
    end = inner + len(value)
    if text[inner:end] != value or (quote in ("'", '"') and text[end : end + 1] != quote):
        return None
    after = end + 1 if inner > at else end
    line_end = text.find("\n", after)
    rest = text[after : len(text) if line_end < 0 else line_end].lstrip(" ")
    if rest and not (rest.startswith("#") and after < len(text) and text[after] == " "):
        return None  # the value goes on (a longer plain scalar, or something else)
    line_start = text.rfind("\n", 0, at) + 1
    return text.count("\n", 0, at) + 1, at - line_start + 1


def _count(node: Any) -> tuple[int, int]:
    """(values, keys) in the subtree of the container ``node``, counted without recursion."""
    values, keys = 1, 0
    stack = [node]
    while stack:
        current = stack.pop()
        if type(current) is dict:
            keys += len(current)
            children: Any = current.values()
        else:
            children = current
        values += len(children)
        for child in children:
            if type(child) is dict or type(child) is list:
                stack.append(child)
    return values, keys


def line_starts(text: str) -> array[int]:
    """The offset where each line of ``text`` after the first starts (past its end too when
    ``text`` ends with a line break). Line breaks as libyaml counts them: ``\\n``, ``\\r\\n``,
    ``\\r``, NEL, LS and PS (``str.splitlines`` also splits at a few control characters, which
    libyaml refuses in a file)."""
    return array("I", accumulate(map(len, text.splitlines(True))))
