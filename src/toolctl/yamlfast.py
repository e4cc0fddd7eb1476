"""The fast path of :func:`toolctl.yamlsrc.loads`: yaml-rs (a YAML 1.2 parser written in Rust)
for the text it is known to read exactly as the strict parser (:mod:`toolctl.yamlparse`) does.

yaml-rs builds the data in native code, about a tenth of the time of libyaml's Python-level
events; it records no positions, so a document it loaded reads them on the first
:meth:`~toolctl.yamldoc.Document.locate` (a file with a problem, a lint finding) by parsing the
text again strictly (see :class:`~toolctl.yamldoc.Document`).

Where the two parsers differ, the strict one decides, so :func:`parse` hands back None (and
the strict parser reads the text) for anything the strict one refuses or reads otherwise:

- what the text shows at once (scanned in C: ``in`` and ``bytes.translate``; a few
  candidates checked one by one): characters libyaml refuses, tabs, carriage returns and the
  Unicode line breaks (NEL, LS, PS) and byte order marks; an ``&``, ``*``, ``!`` or ``%``
  that may start a token (anchors, aliases, tags, directives); ``<<`` anywhere (merge keys);
  a ``:`` next to a flow indicator (``{:x}``, ``[a:]``: libyaml refuses some); document
  markers other than one leading ``---``; block scalar indentation indicators, empty block
  scalars, leading blank lines, text ending in one without a line break; a plain token
  that may be a number yaml-rs reads otherwise (leading zeros, ``0b``, signed hexadecimal
  or octal, underscores, ``.inf``/``.nan``);
- what only the data shows (one walk, which also interns keys and strings as the strict
  parser does and collects the key names): a key that is not a string, nesting deeper than
  :data:`~toolctl.yamldoc.MAX_DEPTH`, a float out of range, an integer too long;
- anything yaml-rs itself refuses (syntax errors, duplicate keys).

``tests/foundation/test_yamlfast.py`` checks both parsers agree on every text the fast path
takes, on a generated corpus of tricky scalars and structures.
"""

from __future__ import annotations

import math
import re
import sys
from bisect import bisect_right
from typing import Any

from toolctl.yamldoc import MAX_DEPTH, MAX_INT_DIGITS, Document

_yaml_rs: Any
try:
    import yaml_rs as _yaml_rs
except ImportError:  # pragma: no cover - a platform without its wheel: the strict parser
    _yaml_rs = None

_intern = sys.intern
# an alias is refused (the strict parser refuses anchors and aliases; an anchor alone reads
# the same either way, and the text scan refuses those it sees)
_NO_ALIASES = None if _yaml_rs is None else _yaml_rs.AliasLimits(max_total_replayed_events=0)
MAX_INT_BITS = int(MAX_INT_DIGITS * 3.32)  # a little under MAX_INT_DIGITS digits: see _walk

# ASCII characters libyaml refuses (C0 controls but LF, and DEL), with tab and CR (which
# yaml-rs and libyaml treat differently in places): deleted by bytes.translate, a changed
# length says one was there.
_ASCII_RISK = bytes(c for c in range(0x20) if c != 0x0A) + b"\x7f"
# UTF-8 of what only non-ASCII text can hold: C1 controls and NEL (U+0080-U+009F start with
# C2 80-9F), LS and PS (YAML 1.1 line breaks), BOM, U+FFFE, U+FFFF.
_WIDE_RISK = (b"\xe2\x80\xa8", b"\xe2\x80\xa9", b"\xef\xbb\xbf", b"\xef\xbf\xbe", b"\xef\xbf\xbf")
_FLOW_COLONS = tuple(
    a + gap + b for gap in ("", " ") for a, b in [("{", ":"), ("[", ":"), (",", ":")]
) + tuple(":" + gap + b for gap in ("", " ") for b in "]},")
_FLOW_COLON = re.compile(r"[\[{,] *:|: *[\]},]")
_C1 = re.compile(b"\xc2[\x80-\x9f]")  # a C1 control or NEL in UTF-8
_DIGITISH = frozenset("0123456789.+-")
# the characters that end a token, before which a token may start
_BREAKS = " \n[]{},"
# a block scalar header: the indicator, chomping, an indentation indicator (group 1: refused),
# spaces and a comment
_BLOCK_HEADER = re.compile(r"[|>][-+]?([0-9][-+]?)?[ ]*(?:#.*)?")
# the start of a plain token yaml-rs may read as another number than the strict parser
# (or as a number where it reads a string): leading zeros, 0b/0o/0x (signed too), .inf and
# .nan, underscores between digits
_RISKY_NUMBER = re.compile(
    r"[-+]?(?:0[0-9_box][0-9a-z_.+-]*|\.(?:inf|nan)|_[0-9a-z_.+-]*|[0-9.][0-9a-z.+-]*_[0-9a-z_.+-]*)",
    re.I,
)
_CANDIDATE = re.compile(r"0(?=[0-9a-zA-Z_])|\.(?=[iInN])|_")
_WORD_ENDS = frozenset(" \n,[]{}#")
_COLON_ENDS = frozenset(["", " ", "\n", ",", "[", "]", "{", "}"])


def available() -> bool:
    """Whether yaml-rs is installed (else every text takes the strict parser)."""
    return _yaml_rs is not None


def parse(text: str) -> Document | None:
    """The :class:`Document` of ``text`` (positions read on demand), or None when the strict
    parser must read it (see the module docs). Never raises."""
    if _yaml_rs is None or not _plain_text(text):
        return None
    skipped = _risky_tokens(text)
    if skipped is None:
        return None
    try:
        data = _yaml_rs.loads(text, parse_datetime=False, alias_limits=_NO_ALIASES)
    except BaseException as exc:  # yaml-rs errors, and a Rust panic (a BaseException)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
        return None
    names: set[str] = set()
    try:
        if type(data) is dict or type(data) is list:
            data = _walk(data, 0, names.add)
        elif not _scalar_ok(data):
            return None
    except _Refused:
        return None
    if skipped and not _in_strings(text, skipped, data):
        return None
    doc = Document(data, "", source=text)
    doc.key_names = names
    return doc


def _in_strings(text: str, skipped: list[int], data: Any) -> bool:
    """Whether each line holding a token skipped as block scalar text is in a string of
    ``data``, as the text of a block scalar is: proof that it was one (a ``|`` in a quoted
    string or a comment looks like a block scalar header too; then what follows is not)."""
    if type(data) is not dict and type(data) is not list:
        return type(data) is str and all(_line_of(text, at) in data for at in skipped)
    strings: list[str] = []
    stack = [data]
    while stack:
        node = stack.pop()
        for value in node.values() if type(node) is dict else node:
            if type(value) is str:
                strings.append(value)
            elif type(value) is dict or type(value) is list:
                stack.append(value)
    return all(any(_line_of(text, at) in string for string in strings) for at in skipped)


def _line_of(text: str, at: int) -> str:
    """The line holding ``at``, without the spaces around it."""
    end = text.find("\n", at)
    return text[text.rfind("\n", 0, at) + 1 : len(text) if end < 0 else end].strip(" ")


def _plain_text(text: str) -> bool:
    """No character the parsers read differently or libyaml refuses; no ``:`` next to a flow
    indicator; no document marker but one leading ``---``; no ``<<``."""
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw.translate(None, _ASCII_RISK)) != len(raw):
        return False
    if not text.isascii():
        if b"\xc2" in raw and _C1.search(raw):
            return False
        if any(mark in raw for mark in _WIDE_RISK) or b"\xed" in raw:  # \xed: a surrogate
            return False
    if any(pair in text for pair in _FLOW_COLONS) or (
        ("  :" in text or ":  " in text) and _FLOW_COLON.search(text)
    ):
        return False  # a ":" next to a flow indicator: libyaml refuses some yaml-rs reads
    body = text[4:] if text.startswith("---\n") else text
    return not (
        "<<" in body or "\n---" in body or "\n..." in body or body.startswith(("---", "..."))
    )


def _token_start(text: str, at: int) -> bool:
    """Whether a token may start at ``at``: at a line start, after a flow indicator, or after
    a space (whatever comes before it: a conservative yes)."""
    return at == 0 or text[at - 1] in _BREAKS


def _value_start(text: str, at: int) -> bool:
    """Whether ``at`` is where a value or key starts: first on its line (after spaces), or
    after a flow indicator or ``: ``, ``- ``, ``? `` (a ``|`` in prose is not)."""
    before = at
    while before > 0 and text[before - 1] == " ":
        before -= 1
    if before == 0 or text[before - 1] in "\n[{,":
        return True
    return before < at and text[before - 1] in ":-?"


def _risky_tokens(text: str) -> list[int] | None:
    """None for a block scalar header the parsers may read differently, or, outside block
    scalars' text, an anchor, alias, tag or directive, a reserved indicator (``@``, a
    backtick) or ``?`` where a value starts, or a plain token that may be a number yaml-rs
    reads otherwise; else where such tokens were skipped as block scalars' text (see
    :func:`_in_strings`)."""
    blocks = _block_scalars(text)
    if blocks is None:
        return None
    skipped: list[int] = []
    for ch in "&*!%":
        for at in _every(text, ch):
            if _token_start(text, at):
                if not _inside(blocks, at):
                    return None
                skipped.append(at)
    for ch in "@`?":
        for at in _every(text, ch):
            if _value_start(text, at):
                if not _inside(blocks, at):
                    return None
                skipped.append(at)
    for at in _number_candidates(text):
        if _numeric_token(text, at):
            if not _inside(blocks, at):
                return None
            skipped.append(at)
    return skipped


def _block_scalars(text: str) -> list[int] | None:
    """Where block scalars' text lies, as a flat sorted list of (start, end) offsets; None
    when one has an indentation indicator, or no line of text indented more than its own
    line right after its header (an empty block scalar, leading blank lines: the parsers read
    those differently), or a ``|``/``>`` where a value starts is not a header."""
    found: list[int] = []
    marks = sorted([*_every(text, "|"), *_every(text, ">")])
    for at in marks:
        if not _value_start(text, at) or _inside(found, at):
            continue  # in prose: a plain or quoted scalar, or a block scalar's text
        end = text.find("\n", at)
        header = _BLOCK_HEADER.fullmatch(text, at, len(text) if end < 0 else end)
        if header is None or header.group(1) or end < 0:
            return None
        indent = _indent(text, text.rfind("\n", 0, at) + 1)
        first = end + 1
        first_end = text.find("\n", first)
        first_line = text[first : len(text) if first_end < 0 else first_end]
        if not first_line.strip(" ") or _indent(text, first) <= indent:
            return None
        last, inner = first, _indent(text, first)
        while last < len(text):  # blank lines and lines indented as its first belong to it
            line_end = text.find("\n", last)
            line_end = len(text) if line_end < 0 else line_end
            if _indent(text, last) < inner and text[last:line_end].strip(" "):
                break
            last = line_end + 1
        if last >= len(text) and not text.endswith("\n"):
            return None  # its text ends the file without a line break: read differently
        found += (first, min(last, len(text)))
    return found


def _every(text: str, ch: str) -> list[int]:
    out, at = [], text.find(ch)
    while at >= 0:
        out.append(at)
        at = text.find(ch, at + 1)
    return out


def _inside(blocks: list[int], at: int) -> bool:
    """Whether ``at`` lies in one of the (start, end) spans of ``blocks``."""
    return bisect_right(blocks, at) % 2 == 1


def _indent(text: str, start: int) -> int:
    """The spaces at the start of the line starting at ``start``."""
    at = start
    while at < len(text) and text[at] == " ":
        at += 1
    return at - start


def _number_candidates(text: str) -> list[int]:
    """Where a number yaml-rs may read otherwise can start or show: a ``0`` followed by a
    digit, a letter or ``_``, or a ``.`` before ``i``/``n`` (``.inf``, ``.nan``), first in a
    token or after a sign; an ``_`` next to a digit, a dot or a sign, or first in a token
    (yaml-rs drops underscores from numbers: ``_1`` is 1)."""
    out = []
    for found in _CANDIDATE.finditer(text):
        at = found.start()
        before = text[at - 1] if at else "\n"
        if text[at] != "_":
            if before in _BREAKS or before in "+-":
                out.append(at)
        elif before in _DIGITISH or before in _BREAKS or text[at + 1 : at + 2] in _DIGITISH:
            out.append(at)
    return out


def _numeric_token(text: str, at: int) -> bool:
    """Whether the plain word holding ``at`` starts where a token may start and is a number
    that yaml-rs may read otherwise (:data:`_RISKY_NUMBER`). A word ends at a space, a line
    break, a flow indicator, a ``#`` or a ``:`` before one of those."""
    start = at
    while start > 0 and text[start - 1] not in _BREAKS:
        start -= 1
    end = at
    while end < len(text) and text[end] not in _WORD_ENDS:
        if text[end] == ":" and text[end + 1 : end + 2] in _COLON_ENDS:
            break
        end += 1
    return _RISKY_NUMBER.fullmatch(text, start, end) is not None and _token_start(text, start)


class _Refused(Exception):
    """The data holds what the strict parser refuses or reads otherwise."""


def _scalar_ok(value: Any) -> bool:
    kind = type(value)
    if kind is float:
        return math.isfinite(value)
    if kind is int:
        return bool(value.bit_length() <= MAX_INT_BITS)
    return value is None or kind is str or kind is bool


def _walk(node: Any, depth: int, add_name: Any) -> Any:
    """``node`` rebuilt with interned keys and strings (a large registry repeats them: one
    object each, as the strict parser makes); :class:`_Refused` for a key that is not a
    string, nesting deeper than the strict parser allows, a number it refuses. The value
    handling is written out in both loops, not called: it runs for every value of every file."""
    if depth >= MAX_DEPTH:
        raise _Refused
    if type(node) is dict:
        out: Any = {}
        for key, value in node.items():
            if type(key) is not str:
                raise _Refused
            key = _intern(key)
            add_name(key)
            kind = type(value)
            if kind is str:
                value = _intern(value)
            elif kind is dict or kind is list:
                value = _walk(value, depth + 1, add_name)
            elif not _scalar_ok(value):
                raise _Refused
            out[key] = value
        return out
    out = []
    for value in node:
        kind = type(value)
        if kind is str:
            value = _intern(value)
        elif kind is dict or kind is list:
            value = _walk(value, depth + 1, add_name)
        elif not _scalar_ok(value):
            raise _Refused
        out.append(value)
    return out
