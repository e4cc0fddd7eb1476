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
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
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


@dataclass
class Document:
    """A loaded file: the JSON-compatible ``data`` and where each part of it was written.

    Use :meth:`locate`. Internally ``positions`` maps a path key (``_SEP`` + each key or index) to
    where that value starts, ``key_positions`` to where its mapping key starts, each as a packed
    ``line << 32 | col``: strings and ints are not tracked by the garbage collector, so a
    large document does not leave hundreds of thousands of tuples for it to scan.
    """

    data: Any
    file: str = ""
    positions: dict[str, int] = field(default_factory=dict)
    key_positions: dict[str, int] = field(default_factory=dict)

    def locate(self, path: JsonPath, *, key: bool = False) -> tuple[int, int]:
        """The 1-based (line, col) of ``path``, or of its nearest written ancestor."""
        keys = [""]
        for part in path:
            keys.append(f"{keys[-1]}{_SEP}{part}")
        if key and keys[-1] in self.key_positions:
            return _unpack(self.key_positions[keys[-1]])
        for candidate in reversed(keys):
            if candidate in self.positions:
                return _unpack(self.positions[candidate])
        return (1, 1)


# Path keys: "" for the root, then SEP + key or index per level. A container's children are all
# keys or all indexes, so "0" and 0 cannot meet; a key containing SEP could only misplace a line.
_SEP = "\x00"


def _unpack(packed: int) -> tuple[int, int]:
    return packed >> 32, packed & 0xFFFFFFFF


def _packed(event: Any) -> int:
    mark = event.start_mark
    line: int = mark.line + 1
    col: int = mark.column + 1
    return line << 32 | col


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
    if value and value[0] not in _SPECIAL_START:
        return _intern(value)  # fast path: cannot be a null, boolean or number
    if value in _NULLS:
        return None
    if value in _TRUES:
        return True
    if value in _FALSES:
        return False
    return _number(event, value)


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


class _Builder:
    """Turns a libyaml event stream into data plus positions, enforcing the strict rules."""

    def __init__(self) -> None:
        self.positions: dict[str, int] = {}
        self.key_positions: dict[str, int] = {}
        # frame: [container, path key, is_mapping, pending_key]
        self.stack: list[list[Any]] = []
        self.root: Any = None
        self.documents = 0

    def _check_node(self, event: Any) -> None:
        if event.anchor is not None:
            raise _fail(
                event,
                f"anchors and aliases are not allowed (anchor &{event.anchor})",
                "TC102",
                hint="write the value out in full",
            )

    def _child_path(self, event: Any) -> str | None:
        """The path key of a new node; ``None`` when it is a mapping key."""
        if not self.stack:
            return ""
        container, path, is_map, pending = self.stack[-1]
        if not is_map:
            return f"{path}{_SEP}{len(container)}"
        if pending is None:
            return None
        return f"{path}{_SEP}{pending}"

    def _attach(self, value: Any, child: str) -> None:
        if not self.stack:
            self.root = value
            return
        frame = self.stack[-1]
        if frame[2]:
            frame[0][frame[3]] = value
            frame[3] = None
        else:
            frame[0].append(value)

    def _key(self, event: Any) -> None:
        frame = self.stack[-1]
        if not isinstance(event, yaml.ScalarEvent):
            raise _fail(event, "mapping keys must be strings (complex key found)", "TC105")
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
        path = f"{frame[1]}{_SEP}{key}"
        if key in frame[0]:
            first = _unpack(self.key_positions.get(path, 0))
            raise _fail(
                event,
                f"duplicate key {key!r} (first defined at line {first[0]})",
                "TC104",
                hint="remove one of the two entries",
            )
        self.key_positions[path] = _packed(event)
        frame[3] = key

    def feed(self, event: Any) -> None:
        """Consume one event. Scalars and ends (most events) take the inlined fast path."""
        kind = type(event)
        if kind is yaml.ScalarEvent and event.anchor is None and self.stack:
            frame = self.stack[-1]
            if frame[2]:
                if frame[3] is None:
                    key = _intern(event.value)  # one string per distinct key, not per use
                    if (
                        event.tag is None
                        and key
                        and key[0] not in _SPECIAL_START
                        and key not in frame[0]
                        and key != "<<"
                    ):  # fast path of _key: a plain, new, ordinary string key
                        self.key_positions[f"{frame[1]}{_SEP}{key}"] = _packed(event)
                        frame[3] = key
                    else:
                        self._key(event)
                    return
                child = f"{frame[1]}{_SEP}{frame[3]}"
                frame[0][frame[3]] = _scalar(event)
                frame[3] = None
            else:
                child = f"{frame[1]}{_SEP}{len(frame[0])}"
                frame[0].append(_scalar(event))
            self.positions[child] = _packed(event)
            return
        if kind is yaml.MappingEndEvent or kind is yaml.SequenceEndEvent:
            self.stack.pop()
            return
        self._feed_other(event)

    def _feed_other(self, event: Any) -> None:
        if isinstance(event, (yaml.StreamStartEvent, yaml.StreamEndEvent, yaml.DocumentEndEvent)):
            return
        if isinstance(event, yaml.DocumentStartEvent):
            self.documents += 1
            if self.documents > 1:
                raise _fail(
                    event,
                    "multiple YAML documents in one file",
                    "TC106",
                    hint="put each document in its own file, or use a `tools:` list",
                )
            return
        if isinstance(event, yaml.AliasEvent):
            raise _fail(
                event,
                f"anchors and aliases are not allowed (alias *{event.anchor})",
                "TC102",
                hint="write the value out in full",
            )
        child = self._child_path(event)
        if child is None:
            self._key(event)
            return
        self._check_node(event)
        if isinstance(event, yaml.ScalarEvent):
            value = _scalar(event)
            self.positions[child] = _packed(event)
            self._attach(value, child)
            return
        if event.tag is not None and event.tag not in (
            "tag:yaml.org,2002:map",
            "tag:yaml.org,2002:seq",
        ):
            raise _fail(
                event,
                f"tag {event.tag!r} is not allowed",
                "TC103",
                hint="remove the tag; toolctl files are plain JSON-like YAML",
            )
        if len(self.stack) >= MAX_DEPTH:
            raise _fail(event, f"nesting deeper than {MAX_DEPTH} levels", "TC107")
        container: Any = {} if isinstance(event, yaml.MappingStartEvent) else []
        self.positions[child] = _packed(event)
        self._attach(container, child)
        self.stack.append([container, child, isinstance(event, yaml.MappingStartEvent), None])


def _feed_events(text: str, feed: Callable[[Any], None]) -> None:
    """Hand each libyaml event of ``text`` to ``feed``: one call into the parser per event
    (``get_event`` returns None after the stream ends) and no generator in between."""
    parser = _Parser(text)
    try:
        get_event = parser.get_event
        event = get_event()
        while event is not None:
            feed(event)
            event = get_event()
    finally:
        parser.dispose()


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


def _age_young_objects() -> None:
    """Move every object out of the young generation without scanning it.

    Otherwise the first allocation after a pause starts a young collection that walks every
    object the pause let pile up (about a second at 10,000 tools) to free nothing. They go to
    the oldest generation (collected rarely); when the program already keeps objects frozen
    (``gc.freeze``, as the CLI does with a loaded registry), they are frozen with them, since
    unfreezing would undo that.
    """
    program_freezes = gc.get_freeze_count() > 0
    gc.freeze()
    if not program_freezes:
        gc.unfreeze()


def loads(text: str, file: str = "<string>") -> Document:
    """Parse strict YAML ``text``; raise :class:`YamlError` with line and column on any problem."""
    builder = _Builder()
    try:
        with gc_paused():
            _feed_events(text, builder.feed)
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
    return Document(builder.root, file, builder.positions, builder.key_positions)


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
        with os.fdopen(fd, "rb") as fh:
            raw = fh.read(max_bytes + 1)
    except OSError as exc:  # unreadable (permissions) or gone since the stat
        raise _unreadable(exc) from None
    if len(raw) > max_bytes:
        raise YamlError(
            f"file larger than {max_bytes} bytes", code="TC108", hint="split it into several files"
        )
    return raw


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
