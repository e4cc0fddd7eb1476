"""Strict YAML files: reading them (bounded), the loaded :class:`Document` with line and column
for every node, and the collector pauses around building large trees. The parser itself lives in
:mod:`toolctl.yamlparse`, imported on the first parse: a command that loads every file from the
load cache never imports PyYAML (about 15 ms of every small command).

Built directly on libyaml's event stream (PyYAML ``CParser``), which is both the strictest and the
cheapest way to load: one pass rejects anchors and aliases, tags, duplicate and non-string keys,
merge keys, multiple documents and excessive nesting, resolves plain scalars by the YAML 1.2 core
schema (``+1``, ``0x10``, ``0o17``, ``1e3`` are numbers; only ``true``/``false`` are booleans;
``NO``, ``on``, ``1:30`` and dates stay strings, and so does ``0755``, octal to YAML 1.1),
and records where each value and key starts. Nothing in a file can run code or expand in memory.
"""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import stat
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolctl.errors import YamlError

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_INT_DIGITS = 4000

JsonPath = tuple[str | int, ...]


class Document:
    """A loaded file: the JSON-compatible ``data`` and where each part of it was written.

    Use :meth:`locate`. The positions are two arrays of packed ``line << 32 | col`` in document
    order: one per value (every node, pre-order: a node, then for a mapping each key's value),
    one per mapping key. No key per node, no tuple per node: 16 bytes a node instead of about
    200 as path-keyed dicts, and nothing for the garbage collector to scan. The arrays need no
    keys because ``data`` keeps document order: a node's index is one past its parent's plus
    the sizes of the subtrees of the siblings before it (:meth:`_find`). ``data`` must not
    change after loading. The load cache stores the same arrays (:meth:`arrays`).
    """

    __slots__ = ("_keys", "_located", "_sizes", "_values", "data", "file", "key_names")

    def __init__(
        self,
        data: Any,
        file: str = "",
        values: array[int] | None = None,
        keys: array[int] | None = None,
    ) -> None:
        self.data = data
        self.file = file
        self._values: array[int] = values if values is not None else array("Q")
        self._keys: array[int] = keys if keys is not None else array("Q")
        self._sizes: dict[int, tuple[int, int]] | None = None  # made when first needed
        self._located: dict[tuple[JsonPath, bool], tuple[int, int]] | None = None
        # every distinct mapping key in the file, as parsed (None when not known): lets the
        # checks skip a walk that looks for keys the file does not have ($ref, pattern)
        self.key_names: set[str] | None = None

    def arrays(self) -> tuple[array[int], array[int]]:
        """The positions as (values, keys) arrays in document order."""
        return self._values, self._keys

    def release(self) -> None:
        """Drop what checking the file needed and later lookups rarely do: the key names and
        the lookup memos (rebuilt on demand). At 10,000 tools the size memo alone, filled by
        locating each tool, would hold a tuple for every container of every file."""
        self.key_names = self._sizes = self._located = None

    def locate(self, path: JsonPath, *, key: bool = False) -> tuple[int, int]:
        """The 1-based (line, col) of ``path``, or of its nearest written ancestor (``key``:
        of its mapping key when ``path`` itself is a key of a mapping)."""
        if not self._values:
            return (1, 1)
        memo = (tuple(path), key)
        if self._located is None:
            self._located = {}
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
        """(values, keys) in the subtree of ``node``, memoised per container."""
        if type(node) is not dict and type(node) is not list:
            return 1, 0
        if self._sizes is None:
            self._sizes = {}
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


def _unpack(packed: int) -> tuple[int, int]:
    return packed >> 32, packed & 0xFFFFFFFF


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Pause the cyclic garbage collector (nestable).

    Building large acyclic trees of dicts triggers repeated full collections that free nothing:
    that is most of the time of a plain YAML load, so loading pauses it.
    """
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            _age_young_objects()
            gc.enable()


_frozen_for_good = False  # see freeze_for_good()


def freeze_for_good() -> None:
    """``gc.freeze()``: every object alive now is left out of later collections (a command's
    registry, a server's start-up heap); later pauses freeze what they let pile up too."""
    global _frozen_for_good
    _frozen_for_good = True
    gc.freeze()


def unfreeze() -> None:
    """Undo :func:`freeze_for_good` (in-process callers that run commands one after another)."""
    global _frozen_for_good
    _frozen_for_good = False
    gc.unfreeze()


def _age_young_objects() -> None:
    """Move every object out of the young generation without scanning it.

    Otherwise the first allocation after a pause starts a young collection that walks every
    object the pause let pile up (about a second at 10,000 tools) to free nothing. They go to
    the oldest generation (collected rarely); when the program already keeps objects frozen
    (``gc.freeze``, as the CLI does with a loaded registry), they are frozen with them, since
    unfreezing would undo that. ``get_freeze_count`` walks the frozen objects (a millisecond
    with a registry frozen): asked only when toolctl has not frozen any itself.
    """
    program_freezes = _frozen_for_good or gc.get_freeze_count() > 0
    gc.freeze()
    if not program_freezes:
        gc.unfreeze()


def real_path(path: Path) -> Path:
    """``path`` absolute with its symlinks resolved, as far as they resolve.

    Unlike ``Path.resolve()`` (``RuntimeError`` on Python 3.11, ``OSError`` later) a symlink
    loop does not raise: the looping part stays unresolved, and reading the file then reports
    the loop (see :func:`read_text`).
    """
    return Path(os.path.realpath(path))


def _unreadable(exc: OSError) -> YamlError:
    if exc.errno == errno.ELOOP:
        return YamlError(
            "symlink loop: the link points back at itself (directly or through other links)",
            code="TC110",
            hint="point the symlink at a real file, or remove it",
        )
    return YamlError(
        f"cannot read file: {exc.strerror}", code="TC110", hint="check the file's permissions"
    )


def read_text(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Read a regular UTF-8 file of at most ``max_bytes`` without ever reading more than that.

    FIFOs, devices and directories are refused before opening; a BOM is accepted.
    """
    return decode_text(read_bytes(path, max_bytes=max_bytes))


def may_hold_directive(data: bytes) -> bool:
    """Whether a file's bytes may hold a ``# toolctl: ...`` comment (an ignore or a misspelt
    directive). Every tool file starts with ``toolctl: 1``, which is not one: ``toolctl:`` at
    the start of a line has no ``#`` before it. (Lint reads a file for ignores only if so.)"""
    count = data.count(b"toolctl:")
    if count != 1:
        return count > 1
    at = data.index(b"toolctl:")
    return not (at == 0 or data[at - 1 : at] == b"\n" or data[:at] == b"\xef\xbb\xbf")


def read_bytes(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (see :func:`read_text`)."""
    try:
        st = path.stat()
    except OSError as exc:
        raise _unreadable(exc) from None
    if not stat.S_ISREG(st.st_mode):
        raise YamlError(
            "not a regular file (FIFOs, devices and directories are refused)", code="TC110"
        )
    if st.st_size > max_bytes:
        raise YamlError(
            f"file larger than {max_bytes} bytes ({st.st_size} bytes)",
            code="TC108",
            hint="split it into several files",
        )
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
        try:
            raw = _read_fd(fd, min(st.st_size, max_bytes) + 1, max_bytes + 1)
        finally:
            os.close(fd)
    except OSError as exc:  # unreadable (permissions) or gone since the stat
        raise _unreadable(exc) from None
    if len(raw) > max_bytes:
        raise YamlError(
            f"file larger than {max_bytes} bytes", code="TC108", hint="split it into several files"
        )
    return raw


def _read_fd(fd: int, expect: int, limit: int) -> bytes:
    """At most ``limit`` bytes of ``fd``, asking for ``expect`` (the size the stat gave, plus
    one) first: a buffered ``read(limit)`` would allocate ``limit`` bytes for every file, which
    was most of the time of reading thousands of small ones. A short read is the end of a
    regular file; a file that grew since the stat is read on, in chunks, up to ``limit``."""
    chunks: list[bytes] = []
    total, want = 0, min(expect, limit)
    while want > 0:
        chunk = os.read(fd, want)
        chunks.append(chunk)
        total += len(chunk)
        if len(chunk) < want:
            break
        want = min(64 * 1024, limit - total)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


def decode_text(raw: bytes) -> str:
    """UTF-8 text (a BOM accepted); :class:`YamlError` with line and column otherwise."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise YamlError(
            f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})",
            line=line,
            col=col,
            code="TC109",
            hint="save the file as UTF-8",
        ) from None


def loads(text: str, file: str = "<string>") -> Document:
    """Parse strict YAML ``text``; raise :class:`YamlError` with line and column on any problem."""
    from toolctl.yamlparse import parse

    return parse(text, file)


def dumps(data: Any, *, base: Any = None, **options: Any) -> str:
    """``data`` as YAML that :func:`loads` reads back unchanged (``"0o17"`` and ``"1e3"`` are
    quoted, which a YAML 1.1 emitter such as PyYAML's leaves plain); ``options`` go to
    ``yaml.dump`` (``sort_keys``, ``width``, ...). ``base`` is a dumper (default
    ``yaml.SafeDumper``) whose representers (layout, string styles) apply to every string that
    needs no quotes."""
    from toolctl.yamlparse import dump

    return dump(data, base=base, **options)


def load_file(
    path: Path, display: str | None = None, *, max_bytes: int = MAX_FILE_BYTES
) -> Document:
    """Read and parse one file; errors carry ``display`` (default: the path) as the file name."""
    name = display or str(path)
    text = read_text(path, max_bytes=max_bytes)
    doc = loads(text, name)
    doc.file = name
    return doc
