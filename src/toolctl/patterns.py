"""Schema patterns (``pattern``, ``patternProperties``, ``format: regex``) with ECMA-262 meaning,
on a linear-time engine.

A pattern is compiled by RE2 (``google-re2``), whose matching time is linear in the text and
whose compiled program is bounded by a memory cap (``max_mem``): a pattern too large for the cap
(``(?:(?:(?:a{1000}){1000}){1000})`` is 32 bytes and would expand to 10⁹ states) is refused with
a message, never built. Only a pattern that RE2 cannot parse (lookaround, backreferences and
other ECMA syntax RE2 lacks) goes to the fallback, the backtracking ``regex`` module, and only
after two static bounds: groups nest at most :data:`MAX_PATTERN_DEPTH` deep, and the pattern
with its counted repetitions written out has at most :data:`MAX_EXPANDED` atoms (``regex``
copies ``x{1000}`` a thousand times). A fallback search runs with a timeout taken from the
call's validation budget (:mod:`toolctl.budget`); running out of it refuses the value.

ECMA meanings kept on both engines: ``$`` only at the very end, ``\\d``/``\\w``/``\\b`` ASCII,
``\\s`` the ECMA white space set, ``.`` not matching line terminators, ``\\uXXXX`` escapes.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

from toolctl.budget import BudgetExceeded, ValidationRefused, current

MAX_PATTERN_DEPTH = 50
"""Deepest group nesting a ``pattern`` may have: regex parsers recurse once per group."""
MAX_EXPANDED = 100_000
"""Most atoms a fallback pattern may have once its counted repetitions are written out."""
SCHEMA_MAX_MEM = 8 << 20
"""RE2 memory cap of one schema pattern (compiled program and matching cache)."""
VALUE_MAX_MEM = 2 << 20
"""RE2 memory cap of a ``format: regex`` value, compiled only to check it and then dropped."""
FALLBACK_TIMEOUT = 0.25
"""Longest one fallback search may take when no call budget is active."""

_ECMA_SPACE = (
    "\\t\\n\\x{0b}\\f\\r \\x{a0}\\x{1680}\\x{2000}-\\x{200a}"
    "\\x{2028}\\x{2029}\\x{202f}\\x{205f}\\x{3000}\\x{feff}"
)
_RE2_ESCAPES = {"s": f"[{_ECMA_SPACE}]", "S": f"[^{_ECMA_SPACE}]"}
_RE2_CLASS_ESCAPES = {"s": _ECMA_SPACE}
_DOT = "[^\\n\\r\\x{2028}\\x{2029}]"
_FALLBACK_ESCAPES = {"d": "[0-9]", "D": "[^0-9]", "w": "[A-Za-z0-9_]", "W": "[^A-Za-z0-9_]"}
_FALLBACK_CLASS_ESCAPES = {"d": "0-9", "w": "A-Za-z0-9_"}


class PatternTooLarge(ValueError):
    """The pattern would take more memory than its cap: refused, not compiled."""


class PatternTimeout(ValidationRefused):
    """A fallback search ran out of time outside any call budget: the value is refused."""


# ---------------------------------------------------------------- static bounds


def group_depth(pattern: str) -> int:
    """How deeply the groups of ``pattern`` nest, in one pass (escapes and classes skipped)."""
    depth = deepest = 0
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")" and depth:
            depth -= 1
        i += 1
    return deepest


def check_pattern_depth(pattern: str) -> None:
    """``ValueError`` when ``pattern`` nests groups deeper than :data:`MAX_PATTERN_DEPTH`."""
    depth = group_depth(pattern)
    if depth > MAX_PATTERN_DEPTH:
        raise ValueError(
            f"regular expression nests groups {depth} deep (at most {MAX_PATTERN_DEPTH}): "
            "flatten it"
        )


def _counted(pattern: str, i: int) -> tuple[int, int] | None:
    """``(count, end)`` of a ``{n}``, ``{n,}`` or ``{n,m}`` at ``i`` (the larger bound)."""
    end = pattern.find("}", i)
    if end < 0:
        return None
    lo, _, hi = pattern[i + 1 : end].partition(",")
    if not lo.isdigit() or (hi and not hi.isdigit()):
        return None
    count = max(int(lo[:12]), int(hi[:12]) if hi else 0)
    return count, end + 1


def expanded_size(pattern: str, cap: int = MAX_EXPANDED) -> int:
    """Atoms in ``pattern`` once every counted repetition is written out (stops past ``cap``)."""
    sizes, last, i = [0], 0, 0
    while i < len(pattern) and sizes[0] <= cap:
        ch = pattern[i]
        if ch == "\\":
            last, i = 1, i + 2
        elif ch == "[":
            i = _class_end(pattern, i)
            last = 1
        elif ch == "(":
            sizes.append(0)
            i += 1
            continue
        elif ch == ")" and len(sizes) > 1:
            last = sizes.pop()
            i += 1
        elif ch == "{" and (counted := _counted(pattern, i)) is not None:
            count, i = counted
            sizes[-1] += last * (max(count, 1) - 1)
            last *= max(count, 1)
            if last > cap:
                return last
            continue
        elif ch in "*+?|":
            i += 1
            last = 0 if ch == "|" else last
            continue
        else:
            last, i = 1, i + 1
        sizes[-1] += last
    return sum(sizes)


def _class_end(pattern: str, i: int) -> int:
    """The index after the character class opening at ``i``."""
    j = i + 1
    if pattern[j : j + 1] == "^":
        j += 1
    if pattern[j : j + 1] == "]":
        j += 1
    while j < len(pattern) and pattern[j] != "]":
        j += 2 if pattern[j] == "\\" else 1
    return j + 1


# ---------------------------------------------------------------- translation


def _hex_escape(pattern: str, i: int) -> tuple[str, int] | None:
    """An ECMA ``\\uXXXX``, ``\\u{X...}`` or ``\\cX`` at ``i`` as RE2's ``\\x{...}``."""
    kind = pattern[i + 1]
    if kind == "c" and i + 2 < len(pattern) and pattern[i + 2].isalpha():
        return f"\\x{{{ord(pattern[i + 2]) % 32:x}}}", i + 3
    if kind != "u":
        return None
    if pattern[i + 2 : i + 3] == "{":
        end = pattern.find("}", i)
        digits = pattern[i + 3 : end] if end > 0 else ""
        return (f"\\x{{{digits}}}", end + 1) if _is_hex(digits) else None
    digits = pattern[i + 2 : i + 6]
    return (f"\\x{{{digits}}}", i + 6) if len(digits) == 4 and _is_hex(digits) else None


def _is_hex(text: str) -> bool:
    return bool(text) and all(ch in "0123456789abcdefABCDEF" for ch in text)


def to_re2(pattern: str) -> str:
    """An ECMA-262 pattern written for RE2 (``$`` already means end of text there)."""
    return _translate(pattern, _re2_escape, {".": _DOT})


def to_fallback(pattern: str) -> str:
    """An ECMA-262 pattern written for the ``regex`` module (``$``, ``\\d``, ``\\w``)."""
    return _translate(pattern, _fallback_escape, {"$": r"\Z"})


def _translate(
    pattern: str, escape: Callable[[str, int, bool], tuple[str, int]], outside: dict[str, str]
) -> str:
    """``pattern`` rewritten in one pass that tracks character classes: ``escape(pattern, i,
    in_class)`` gives the text and the next index for the escape at ``i``; ``outside`` maps
    single characters outside a class."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            text, i = escape(pattern, i, in_class)
            out.append(text)
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        elif not in_class:
            ch = outside.get(ch, ch)
        out.append(ch)
        i += 1
    return "".join(out)


def _re2_escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    converted = _hex_escape(pattern, i)
    if converted is not None:
        return converted
    table = _RE2_CLASS_ESCAPES if in_class else _RE2_ESCAPES
    return table.get(pattern[i + 1], pattern[i : i + 2]), i + 2


def _fallback_escape(pattern: str, i: int, in_class: bool) -> tuple[str, int]:
    table = _FALLBACK_CLASS_ESCAPES if in_class else _FALLBACK_ESCAPES
    return table.get(pattern[i + 1], pattern[i : i + 2]), i + 2


# ---------------------------------------------------------------- compiling


@functools.cache
def _options(max_mem: int) -> Any:
    import re2

    options = re2.Options()
    options.max_mem = max_mem
    options.log_errors = False  # RE2 would print its complaint on stderr
    options.never_capture = True  # only "does it match" is asked: no submatch bookkeeping
    return options


class Pattern:
    """One compiled pattern: RE2 when it can, else the bounded fallback."""

    __slots__ = ("engine", "fallback", "matches", "source")

    def __init__(self, source: str, engine: Any, fallback: bool) -> None:
        self.source = source
        self.engine = engine
        self.fallback = fallback
        self.matches = None if fallback else _re2_matches(engine)

    def search(self, text: str, timeout: float | None = None) -> bool:
        """True when the pattern matches somewhere in ``text``.

        On the fallback engine the search may take at most ``timeout`` seconds, or what is
        left of the active validation budget; past it the budget's
        :class:`~toolctl.budget.BudgetExceeded` (or :class:`PatternTimeout` without a budget):
        a refusal, never a non-match.
        """
        if not self.fallback:
            try:
                data = text.encode("utf-8")
            except UnicodeEncodeError:  # a lone surrogate: RE2 reads UTF-8
                text = text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
                data = text.encode("utf-8")
            if self.matches is not None:
                return self.matches(data)
            return self.engine.search(text) is not None
        budget = current()
        left = budget.remaining() if budget is not None else FALLBACK_TIMEOUT
        if timeout is not None:
            left = min(left, timeout)
        try:
            return self.engine.search(text, timeout=max(left, 0.001)) is not None
        except TimeoutError:
            if budget is not None:  # it had what was left of the call's budget
                raise BudgetExceeded(budget) from None
            raise PatternTimeout(
                f"pattern {_short(self.source)} took longer than {max(left, 0.001):.3g} s on "
                "this value; the value is refused"
            ) from None


def _re2_matches(engine: Any) -> Callable[[bytes], bool] | None:
    """Whether RE2 finds the pattern in UTF-8 bytes, asked of RE2 itself: the binding's
    ``search`` is that one call plus a Python loop turning every byte offset back into a
    character offset (for a Match object no caller here wants), about eight times the search.
    None when the binding's inside is not as expected (another version): ``search`` then."""
    import re2

    try:
        match, anchor, none = engine._regexp.Match, re2._Anchor.UNANCHORED, re2._NULL_SPAN
    except AttributeError:  # pragma: no cover - another google-re2 version
        return None
    return lambda data: match(anchor, data, 0, len(data))[0] != none


def _re2_error(pattern: str, max_mem: int) -> tuple[Any, str | None]:
    """RE2's compiled pattern, or None and why RE2 refused it."""
    import re2

    try:
        return re2.compile(to_re2(pattern), _options(max_mem)), None
    except re2.error as exc:
        reason = exc.args[0] if exc.args else exc
        return None, reason.decode("utf-8", "replace") if isinstance(reason, bytes) else str(reason)


_TOO_LARGE = ("pattern too large", "invalid repetition size")


def build(pattern: str, max_mem: int = SCHEMA_MAX_MEM) -> Pattern:
    """Compile an ECMA-262 pattern (see the module docstring); ``ValueError`` when it is not a
    valid regex or :class:`PatternTooLarge` when it is too large to run safely."""
    check_pattern_depth(pattern)
    compiled, why = _re2_error(pattern, max_mem)
    if compiled is not None:
        return Pattern(pattern, compiled, fallback=False)
    if any(text in str(why) for text in _TOO_LARGE):
        raise PatternTooLarge(
            f"regular expression {_short(pattern)} is too large to run: its repetitions "
            f"expand past the memory limit of {max_mem >> 20} MiB; use smaller repetition "
            "counts, or + and * instead of {n}"
        )
    return Pattern(pattern, _fallback(pattern), fallback=True)


def _fallback(pattern: str) -> Any:
    import regex

    size = expanded_size(pattern)
    if size > MAX_EXPANDED:
        raise PatternTooLarge(
            f"regular expression {_short(pattern)} is too large to run: written out, its "
            f"repetitions make more than {MAX_EXPANDED} atoms; use smaller repetition counts"
        )
    try:
        return regex.compile(to_fallback(pattern))
    except regex.error as exc:
        raise ValueError(f"invalid regular expression {_short(pattern)}: {exc}") from None
    except RecursionError:  # a shape the depth check does not count
        raise ValueError("regular expression is nested too deeply: simplify it") from None


def _short(pattern: str, limit: int = 80) -> str:
    return repr(pattern if len(pattern) <= limit else pattern[:limit] + "…")


@functools.lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Pattern:
    """A schema pattern, compiled once per process (schema patterns come from tool files)."""
    return build(pattern, SCHEMA_MAX_MEM)


def check_value(pattern: str) -> None:
    """``ValueError`` when a ``format: regex`` *value* is not a pattern toolctl would run.

    Values come from callers, so they are compiled under the smaller cap and never cached:
    a caller cannot fill memory with compiled patterns.
    """
    build(pattern, VALUE_MAX_MEM)


def pattern_search(pattern: str, text: str, timeout: float | None = None) -> bool:
    """True when ``pattern`` matches in ``text``; :class:`BudgetExceeded` past the budget."""
    return compile_pattern(pattern).search(text, timeout)
