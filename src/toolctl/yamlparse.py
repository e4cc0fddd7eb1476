"""The strict YAML parser behind :func:`toolctl.yamlsrc.loads` (imported on the first parse).

One pass over libyaml's events (PyYAML ``CParser``) rejects anchors and aliases, tags, duplicate
and non-string keys, merge keys, multiple documents and excessive nesting, resolves plain scalars
by the YAML 1.2 core schema, and records where each value and key starts.
"""

from __future__ import annotations

import math
import re
import sys
from array import array
from typing import Any

import yaml

from toolctl.errors import YamlError
from toolctl.gcpause import gc_paused
from toolctl.yamldoc import MAX_DEPTH, MAX_INT_DIGITS, Document, line_starts

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
MAX_OFFSET = 0xFFFFFFFF  # positions are 32-bit character offsets (see Document)
_STR_TAGS = frozenset({"!", "tag:yaml.org,2002:str"})
# First characters of every plain scalar that resolves to something other than a string.
_SPECIAL_START = frozenset("-+.0123456789~nNtTfF")
# Of those, the first characters of numbers; a plain scalar starting otherwise is a string
# unless it is one of these words.
_NUMBER_START = frozenset("-+.0123456789")
_NOT_STRINGS = _NULLS | _TRUES | _FALSES


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
    found = _RESOLVED.get(value, _UNSET)
    if found is not _UNSET:
        return found
    if value and value[0] in _NUMBER_START:
        found = _number(event, value)  # raises for what JSON cannot hold: never remembered
        if len(value) <= _RESOLVED_TEXT and len(_RESOLVED) < _RESOLVED_MAX:
            _RESOLVED[value] = found
        return found
    return _intern(value)  # a word, not a null, boolean or number


# Plain scalars that are not plain words, resolved once per process: nulls, booleans and the few
# numbers a registry repeats (limits, sizes, defaults: a tenth of a file's scalars). Resolving a
# number runs up to seven regular expressions; what a text resolves to depends on nothing else.
# Short texts only, and a bounded number of them.
_UNSET: Any = object()
_RESOLVED: dict[str, Any] = {
    **dict.fromkeys(_NULLS),
    **dict.fromkeys(_TRUES, True),
    **dict.fromkeys(_FALSES, False),
}
_RESOLVED_TEXT = 40
_RESOLVED_MAX = 4096


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


def dump(data: Any, *, base: Any = None, **options: Any) -> str:
    """:func:`toolctl.yamlsrc.dumps`."""
    base = base or yaml.SafeDumper

    class _Dumper(base):  # type: ignore[misc]
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
    and a position is one append to an array (the node's character offset: see Document).
    ``container`` is the open mapping or sequence (None outside the root), ``pending`` the key
    whose value comes next; ``stack`` keeps the enclosing (container, is_mapping) pairs.
    """
    values: array[int] = array("I")
    keys: array[int] = array("I")
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
                offset = event.start_mark.index
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
                        pending = _key(event, container, stack, root, values, keys, text)
                    add_key(offset)
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
                    add_value(offset)
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
                add_value(event.start_mark.index)
                stack.append((container, is_map))
                container, is_map = new, kind is _MappingStartEvent
            else:
                documents = _other_event(event, documents)
            event = get_event()
    finally:
        parser.dispose()
    doc = Document(root, "", values, keys, line_starts(text))
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
    text: str,
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
        first = Document(root, "", values, keys, line_starts(text))
        line, _ = first.locate((*path, key), key=True)
        raise _fail(
            event,
            f"duplicate key {key!r} (first defined at line {line})",
            "TC104",
            hint="remove one of the two entries",
        )
    return key


def parse(text: str, file: str = "<string>") -> Document:
    """Parse strict YAML ``text``; raise :class:`YamlError` with line and column on any problem."""
    if text[:1] == "\ufeff":
        text = text[1:]  # libyaml skips a byte order mark without counting it in its offsets
    if len(text) > MAX_OFFSET:  # files are capped far below; this is text handed to loads()
        raise YamlError(
            f"text longer than {MAX_OFFSET} characters", code="TC108", hint="split it up"
        )
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
