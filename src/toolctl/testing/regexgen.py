"""Strings that match a regular expression, drawn at random from its parsed form.

JSON Schema ``pattern`` is a *search*: a string matching the pattern anywhere is valid, so
producing exactly one match is enough. Lookarounds are ignored; the caller checks every value
with the real validator anyway, so an imperfect draw costs a retry, never a wrong verdict.
"""

from __future__ import annotations

import random
import string
import sys
from typing import Any

if sys.version_info >= (3, 11):
    from re import _constants as C
    from re import _parser as P
else:  # pragma: no cover
    import sre_constants as C
    import sre_parse as P

MAX_EXTRA_REPEATS = 3

_CATEGORIES: dict[Any, str] = {
    C.CATEGORY_DIGIT: string.digits,
    C.CATEGORY_NOT_DIGIT: string.ascii_letters + " _-.",
    C.CATEGORY_SPACE: " \t",
    C.CATEGORY_NOT_SPACE: string.ascii_letters + string.digits,
    C.CATEGORY_WORD: string.ascii_letters + string.digits + "_",
    C.CATEGORY_NOT_WORD: " -.,!@",
}
_ANY = string.ascii_letters + string.digits + " _-.,:/é"


class RegexUnsupported(ValueError):
    """The pattern uses something this generator cannot draw from."""


def _pick_in(items: list[tuple[Any, Any]], rng: random.Random) -> str:
    chars: list[str] = []
    negate = False
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            chars.append(chr(av))
        elif op is C.RANGE:
            lo, hi = av
            chars.extend(chr(c) for c in range(lo, min(hi, lo + 200) + 1))
        elif op is C.CATEGORY:
            chars.extend(_CATEGORIES.get(av, "a"))
    if negate:
        banned = set(chars)
        chars = [c for c in _ANY if c not in banned]
    if not chars:
        raise RegexUnsupported("empty character class")
    return rng.choice(chars)


def _emit(items: Any, rng: random.Random, out: list[str], groups: dict[int, str]) -> None:
    for op, av in items:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append(rng.choice([c for c in _ANY if c != chr(av)]))
        elif op is C.ANY:
            out.append(rng.choice(_ANY))
        elif op is C.IN:
            out.append(_pick_in(av, rng))
        elif op is C.CATEGORY:
            out.append(rng.choice(_CATEGORIES.get(av, "a")))
        elif op is C.BRANCH:
            _emit(rng.choice(av[1]), rng, out, groups)
        elif op is C.SUBPATTERN:
            start = len(out)
            _emit(av[-1], rng, out, groups)
            if av[0] is not None:
                groups[av[0]] = "".join(out[start:])
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT) or op.name == "POSSESSIVE_REPEAT":
            low, high, sub = av
            top = (
                low + MAX_EXTRA_REPEATS
                if high is C.MAXREPEAT
                else min(high, low + MAX_EXTRA_REPEATS)
            )
            for _ in range(rng.randint(low, top)):
                _emit(sub, rng, out, groups)
        elif op is C.GROUPREF:
            out.append(groups.get(av, ""))
        elif op.name == "ATOMIC_GROUP":
            _emit(av, rng, out, groups)
        elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            continue
        else:
            raise RegexUnsupported(f"regex construct {op} is not supported")


def draw(pattern: str, rng: random.Random) -> str:
    """One string matching ``pattern`` (most of the time; validate it to be sure)."""
    try:
        parsed = P.parse(pattern)
    except Exception as exc:  # sre's error type moved between versions
        raise RegexUnsupported(str(exc)) from None
    out: list[str] = []
    _emit(parsed, rng, out, {})
    return "".join(out)
