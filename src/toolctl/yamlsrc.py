"""Strict YAML: a JSON-like subset of YAML with line and column for every node.

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
import math
import os
import re
import stat
import sys
from array import array
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import yaml

from toolctl.errors import YamlError

MAX_FILE_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_INT_DIGITS = 4000

JsonPath = tuple[str | int, ...]

# Keys and strings repeat across tools ("type", "string", shared descriptions): one object each
# keeps a large registry's data a fraction of its size.
_intern = sys.intern

_Parser: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

# YAML 1.2 core schema (https://yaml.org/spec/1.2.2/#1032-tag-resolution), with one exception:
# a decimal integer written with a leading zero (0755, 007) stays a string, because YAML 1.1
# parsers read it as octal; quote-free file modes keep meaning what they say.
_INT = re.compile(r"[-+]?(?:0|[1-9][0-9]*)\Z")
_OCT = re.compile(r"0o[0-7]+\Z")
_HEX = re.compile(r"0x[0-9a-fA-F]+\Z")
_FLOAT = re.compile(r"[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)(?:[eE][-+]?[0-9]+)?\Z")
_LEADING_ZERO = re.compile(r"[-+]?0[0-9]+\Z")
_INF = re.compile(r"[-+]?\.(?:inf|Inf|INF)\Z")
_NAN = re.compile(r"\.(?:nan|NaN|NAN)\Z")
_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_TRUES = frozenset({"true", "True", "TRUE"})
_FALSES = frozenset({"false", "False", "FALSE"})
MAX_INT_BITS = int(MAX_INT_DIGITS * 3.33)
_STR_TAGS = frozenset({"!", "tag:yaml.org,2002:str"})
# First characters of every plain scalar that resolves to something other than a string.
_SPECIAL_START = frozenset("-+.0123456789~nNtTfF")
# Of those, the first characters of numbers; a plain scalar starting otherwise is a string
# unless it is one of these words.
_NUMBER_START = frozenset("-+.0123456789")
_NOT_STRINGS = _NULLS | _TRUES | _FALSES


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


def _mark(event: Any) -> tuple[int, int]:
    if event is None:  # resolving text that is not in a document (dumps)
        return (0, 0)
    m = event.start_mark
    return (m.line + 1, m.column + 1)


def _fail(event: Any, message: str, code: str, hint: str | None = None) -> YamlError:
    line, col = _mark(event)
    return YamlError(message, line=line, col=col, code=code, hint=hint)


def _scalar(event: Any) -> Any:
    """Resolve a scalar event to a JSON value by the YAML 1.2 core schema (see ``_INT``)."""
    tag = event.tag
    value: str = event.value
    if tag is not None:
        if tag in _STR_TAGS:
            return value
        raise _fail(
            event,
            f"tag {tag!r} is not allowed",
            "TC103",
            hint="remove the tag; toolctl files are plain JSON-like YAML",
        )
    if not event.implicit[0]:
        return _intern(value)  # quoted, literal or folded: always a string
    if value and value[0] in _NUMBER_START:
        return _number(event, value)
    if value not in _NOT_STRINGS:
        return _intern(value)  # the common case: a word, not a null, boolean or number
    if value in _NULLS:
        return None
    return value in _TRUES


def _non_finite(text: str, number: float) -> str:
    if math.isnan(number):
        return "not a number"
    return "infinite" if "inf" in text.lower() else "out of range"


def _number(event: Any, value: str) -> Any:
    """An int or float by the core schema; the text itself when it is neither."""
    number: int | float
    if _INT.match(value):
        if len(value) > MAX_INT_DIGITS:
            raise _fail(event, f"integer with {len(value)} digits is too long", "TC109")
        return int(value)
    if _LEADING_ZERO.match(value):
        return value  # YAML 1.1 octal; see _INT
    if _HEX.match(value) or _OCT.match(value):
        number = int(value[2:], 16 if value[1] == "x" else 8)
        if number.bit_length() > MAX_INT_BITS:
            raise _fail(event, f"integer {value[:12]}... is too long", "TC109")
        return number
    if _FLOAT.match(value):
        number = float(value)
    elif _INF.match(value) or _NAN.match(value):
        number = float(value.replace(".", "", 1))
    else:
        return value
    if not math.isfinite(number):
        raise _fail(
            event,
            f"number {value} is {_non_finite(value, number)}, which JSON cannot hold",
            "TC109",
            hint=f'quote it if you meant the string: "{value}"',
        )
    return number


def _reads_back(text: str) -> bool:
    """True when ``text`` written as a plain scalar loads back as the same string."""
    if not text or text[0] not in _SPECIAL_START:
        return True
    if text in _NULLS or text in _TRUES or text in _FALSES:
        return False
    try:
        return bool(_number(None, text) == text)
    except YamlError:
        return False


def dumps(data: Any, *, base: type[yaml.SafeDumper] = yaml.SafeDumper, **options: Any) -> str:
    """``data`` as YAML that :func:`loads` reads back unchanged (``"0o17"`` and ``"1e3"`` are
    quoted, which a YAML 1.1 emitter such as PyYAML's leaves plain); ``options`` go to
    ``yaml.dump`` (``sort_keys``, ``width``, ...). ``base`` is a dumper whose representers
    (layout, string styles) apply to every string that needs no quotes."""

    class _Dumper(base):  # type: ignore[valid-type,misc]
        pass

    plain = base.yaml_representers[str]

    def text(dumper: Any, value: str) -> Any:
        if _reads_back(value):
            return plain(dumper, value)
        return dumper.represent_scalar("tag:yaml.org,2002:str", value, style='"')

    _Dumper.add_representer(str, text)
    out: str = yaml.dump(data, Dumper=_Dumper, **options)
    return out


_ScalarEvent = yaml.ScalarEvent
_MappingStartEvent = yaml.MappingStartEvent
_SequenceStartEvent = yaml.SequenceStartEvent
_COLLECTION_TAGS = (None, "tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")
_MappingEndEvent = yaml.MappingEndEvent
_SequenceEndEvent = yaml.SequenceEndEvent
_IGNORED = (yaml.StreamStartEvent, yaml.StreamEndEvent, yaml.DocumentEndEvent)


def _anchored(event: Any) -> YamlError:
    return _fail(
        event,
        f"anchors and aliases are not allowed (anchor &{event.anchor})",
        "TC102",
        hint="write the value out in full",
    )


def _build(text: str) -> Document:
    """Turn ``text``'s libyaml event stream into a :class:`Document`, enforcing the strict rules.

    One loop with everything in locals: it runs once per event (a hundred and more per tool),
    so scalars (most events) and ends take the shortest path, a plain word is resolved inline,
    and a position is one append to an array. ``container`` is the open mapping or sequence
    (None outside the root), ``pending`` the key whose value comes next; ``stack`` keeps the
    enclosing (container, is_mapping) pairs.
    """
    values: array[int] = array("Q")
    keys: array[int] = array("Q")
    add_value, add_key = values.append, keys.append
    names: set[str] = set()
    add_name = names.add
    stack: list[tuple[Any, bool]] = []
    container: Any = None
    is_map = False
    pending: str | None = None
    root: Any = None
    documents = 0
    parser = _Parser(text)
    try:
        get_event = parser.get_event
        event = get_event()
        while event is not None:
            kind = type(event)
            if kind is _ScalarEvent:
                if event.anchor is not None:
                    raise _anchored(event)
                mark = event.start_mark
                packed = (mark.line + 1) << 32 | (mark.column + 1)
                scalar = event.value
                if is_map and pending is None:  # a key
                    if (
                        event.tag is None
                        and scalar
                        and scalar[0] not in _NUMBER_START
                        and scalar not in _NOT_STRINGS
                        and scalar != "<<"
                        and scalar not in container
                    ):  # a plain, new, ordinary string key
                        pending = _intern(scalar)
                    else:
                        pending = _key(event, container, stack, root, values, keys)
                    add_key(packed)
                    add_name(pending)
                else:
                    if event.tag is None and (
                        not event.implicit[0]  # quoted, literal or folded
                        or (
                            scalar and scalar[0] not in _NUMBER_START and scalar not in _NOT_STRINGS
                        )
                    ):
                        value: Any = _intern(scalar)  # a string
                    else:
                        value = _scalar(event)
                    if pending is not None:
                        container[pending] = value
                        pending = None
                    elif container is not None:
                        container.append(value)
                    else:
                        root = value
                    add_value(packed)
            elif kind is _MappingEndEvent or kind is _SequenceEndEvent:
                container, is_map = stack.pop()
            elif kind is _MappingStartEvent or kind is _SequenceStartEvent:
                if event.anchor is not None:
                    raise _anchored(event)
                if event.tag not in _COLLECTION_TAGS:
                    raise _fail(
                        event,
                        f"tag {event.tag!r} is not allowed",
                        "TC103",
                        hint="remove the tag; toolctl files are plain JSON-like YAML",
                    )
                if len(stack) >= MAX_DEPTH:
                    raise _fail(event, f"nesting deeper than {MAX_DEPTH} levels", "TC107")
                new: Any = {} if kind is _MappingStartEvent else []
                if pending is not None:
                    container[pending] = new
                    pending = None
                elif is_map:
                    raise _fail(event, "mapping keys must be strings (complex key found)", "TC105")
                elif container is not None:
                    container.append(new)
                else:
                    root = new
                mark = event.start_mark
                add_value((mark.line + 1) << 32 | (mark.column + 1))
                stack.append((container, is_map))
                container, is_map = new, kind is _MappingStartEvent
            else:
                documents = _other_event(event, documents)
            event = get_event()
    finally:
        parser.dispose()
    doc = Document(root, "", values, keys)
    doc.key_names = names
    return doc


def _other_event(event: Any, documents: int) -> int:
    """Stream and document events (a second document is refused) and aliases (refused)."""
    if isinstance(event, yaml.DocumentStartEvent):
        if documents:
            raise _fail(
                event,
                "multiple YAML documents in one file",
                "TC106",
                hint="put each document in its own file, or use a `tools:` list",
            )
        return documents + 1
    if isinstance(event, yaml.AliasEvent):
        raise _fail(
            event,
            f"anchors and aliases are not allowed (alias *{event.anchor})",
            "TC102",
            hint="write the value out in full",
        )
    if not isinstance(event, _IGNORED):  # pragma: no cover - libyaml emits no other events
        raise _fail(event, f"unexpected YAML event {type(event).__name__}", "TC101")
    return documents


def _key(
    event: Any,
    mapping: dict[str, Any],
    stack: list[tuple[Any, bool]],
    root: Any,
    values: array[int],
    keys: array[int],
) -> str:
    """A mapping key that is not a plain new word: resolved and checked (the slow path)."""
    key = _scalar(event)
    if not isinstance(key, str):
        raise _fail(
            event,
            f"mapping keys must be strings, got {event.value!r}",
            "TC105",
            hint=f'quote it: "{event.value}"',
        )
    if key == "<<" and event.implicit[0]:
        raise _fail(
            event,
            "merge keys (<<) are not allowed",
            "TC102",
            hint="write the merged keys out in full",
        )
    if key in mapping:
        # each open container is the last child of the one enclosing it (stack[0] is the
        # outside of the root)
        path: list[str | int] = []
        for parent, _ in stack[1:]:
            path.append(next(reversed(parent)) if type(parent) is dict else len(parent) - 1)
        line, _ = Document(root, "", values, keys).locate((*path, key), key=True)
        raise _fail(
            event,
            f"duplicate key {key!r} (first defined at line {line})",
            "TC104",
            hint="remove one of the two entries",
        )
    return key


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


def loads(text: str, file: str = "<string>") -> Document:
    """Parse strict YAML ``text``; raise :class:`YamlError` with line and column on any problem."""
    try:
        with gc_paused():
            doc = _build(text)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        problem = exc.problem or exc.context or "invalid YAML"
        line, col = (mark.line + 1, mark.column + 1) if mark else (0, 0)
        if "maximum nesting depth" in problem:
            raise YamlError(
                f"nesting deeper than {MAX_DEPTH} levels", line=line, col=col, code="TC107"
            ) from None
        raise YamlError(f"YAML syntax error: {problem}", line=line, col=col, code="TC101") from None
    except yaml.reader.ReaderError as exc:
        line, col = _line_col(text, exc.position)
        raise YamlError(
            f"character U+{exc.character:04X} is not allowed ({exc.reason})",
            line=line,
            col=col,
            code="TC101",
            hint=f'remove it, or write it as "\\u{exc.character:04x}" in a double-quoted string',
        ) from None
    except yaml.YAMLError as exc:
        raise YamlError(f"YAML error: {exc}", code="TC101") from None
    doc.file = file
    return doc


def _line_col(text: str, byte_offset: int) -> tuple[int, int]:
    """1-based line and column of a UTF-8 byte offset into ``text`` (libyaml counts bytes)."""
    before = text.encode("utf-8")[:byte_offset].decode("utf-8", "replace")
    return before.count("\n") + 1, len(before) - (before.rfind("\n") + 1) + 1


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


def load_file(
    path: Path, display: str | None = None, *, max_bytes: int = MAX_FILE_BYTES
) -> Document:
    """Read and parse one file; errors carry ``display`` (default: the path) as the file name."""
    name = display or str(path)
    text = read_text(path, max_bytes=max_bytes)
    doc = loads(text, name)
    doc.file = name
    return doc
