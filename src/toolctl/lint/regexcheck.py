"""Static checks of ``pattern`` regexes: backtracking shapes and non-portable syntax.

A small parser builds a tree of atoms and groups with their quantifiers; no regex is compiled or
run. Two shapes make backtracking engines (Python ``re``, JavaScript, PCRE) explode:

* a repeated group whose body can match in more than one way because it is itself only a
  repeated atom (``(a+)+``, ``(\\w+\\s?)*``): star height 2 with nothing fixed to anchor it;
* a repeated alternation whose branches can start with the same character (``(a|a)+``,
  ``(\\w|\\d)*``).

The analysis is linear in the pattern (a repeated alternation of 10,000 branches is compared in
one pass, not pairwise) and bounded: a pattern nested deeper than
:data:`~toolctl.schema.MAX_PATTERN_DEPTH` groups or with more than :data:`MAX_NODES` atoms
raises :class:`TooComplex` instead of being analysed.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field

from toolctl.schema import MAX_PATTERN_DEPTH, group_depth

_UNBOUNDED = 10**9
MAX_NODES = 50_000
"""Most atoms and groups one pattern may have before it is reported as too complex."""


class TooComplex(Exception):
    """The pattern is beyond the analysis budget; the message says which limit."""


@dataclass
class _Node:
    """An atom (``first`` is its first-character class) or a group (``alts`` of node lists)."""

    first: str = ""
    alts: list[list[_Node]] = field(default_factory=list)
    lo: int = 1
    hi: int = 1

    @property
    def repeated(self) -> bool:
        return self.hi >= _UNBOUNDED

    @property
    def optional(self) -> bool:
        return self.lo == 0


_CLASSES = {"d": "digit", "w": "word", "s": "space", "D": "any", "W": "any", "S": "any"}


def _quantifier(p: str, i: int) -> tuple[int, int, int]:
    """(min, max, next index) of a quantifier at ``p[i]``, or (1, 1, i) when there is none."""
    if i >= len(p):
        return 1, 1, i
    c = p[i]
    lo, hi, j = (
        (0, _UNBOUNDED, i + 1)
        if c == "*"
        else (1, _UNBOUNDED, i + 1)
        if c == "+"
        else (0, 1, i + 1)
        if c == "?"
        else (1, 1, i)
    )
    if c == "{":
        m = re.match(r"\{(\d*)(,?)(\d*)\}", p[i:])
        if m and (m.group(1) or m.group(3)):
            lo = int(m.group(1) or 0)
            hi = int(m.group(3)) if m.group(3) else (_UNBOUNDED if m.group(2) else lo)
            j = i + m.end()
    if j != i and j < len(p) and p[j] in "?+":
        j += 1  # lazy or possessive marker
    return lo, hi, j


def _class_end(p: str, i: int) -> int:
    j = i + 1
    if j < len(p) and p[j] == "^":
        j += 1
    if j < len(p) and p[j] == "]":
        j += 1
    while j < len(p) and p[j] != "]":
        j += 2 if p[j] == "\\" else 1
    return j + 1


def _parse(p: str, i: int = 0, budget: list[int] | None = None) -> tuple[list[list[_Node]], int]:
    budget = budget if budget is not None else [MAX_NODES]
    alts: list[list[_Node]] = [[]]
    while i < len(p):
        c = p[i]
        if c == ")":
            return alts, i + 1
        if c == "|":
            alts.append([])
            i += 1
            continue
        if c in "^$":
            i += 1
            continue
        if c == "(":
            start = i + 1
            if p.startswith("?", start):
                m = re.match(
                    r"\?(?:[:=!>]|<[=!]|<[A-Za-z_]\w*>|P<[A-Za-z_]\w*>|[a-zA-Z-]+:?)", p[start:]
                )
                start += m.end() if m else 1
            inner, i = _parse(p, start, budget)
            node = _Node(alts=inner)
        elif c == "[":
            end = _class_end(p, i)
            node, i = _Node(first="class:" + p[i:end]), end
        elif c == "\\" and i + 1 < len(p):
            node, i = _Node(first=_CLASSES.get(p[i + 1], "lit:" + p[i + 1])), i + 2
        else:
            node, i = _Node(first="any" if c == "." else "lit:" + c), i + 1
        node.lo, node.hi, i = _quantifier(p, i)
        alts[-1].append(node)
        budget[0] -= 1
        if budget[0] < 0:
            raise TooComplex(f"more than {MAX_NODES} atoms and groups")
    return alts, i


def _first(nodes: list[_Node]) -> set[str]:
    out: set[str] = set()
    for node in nodes:
        out |= {f for alt in node.alts for f in _first(alt)} if node.alts else {node.first}
        if not node.optional:
            break
    return out


def _kinds(tokens: set[str]) -> set[str]:
    """What a branch's first characters can be, for the cross-kind overlaps below."""
    out = set()
    for t in tokens:
        if t in ("word", "digit"):
            out.add(t)
        elif t.startswith("lit:"):
            lit = t[4:]
            if lit.isalnum() or lit == "_":
                out.add("lit-word")
            if lit.isdigit():
                out.add("lit-digit")
    return out


# (kind in one branch, kind in another) pairs that can match the same character
_CROSS = (("word", "lit-word"), ("word", "digit"), ("digit", "lit-digit"))


def _branches_overlap(firsts: list[set[str]]) -> bool:
    """True when two of the branches can start with the same character; linear in the branches.

    Exact tokens shared by two branches, a wildcard or class beside another branch, or a
    class-like token (``\\w``, ``\\d``) beside a literal or class it contains.
    """
    nonempty = [f for f in firsts if f]
    if len(nonempty) < 2:
        return False
    owner: dict[str, int] = {}
    holders: dict[str, list[int]] = {}
    for index, tokens in enumerate(nonempty):
        for token in tokens:
            if token == "any" or token.startswith("class:"):
                return True
            if owner.setdefault(token, index) != index:
                return True
        for kind in _kinds(tokens):
            found = holders.setdefault(kind, [])
            if len(found) < 2:
                found.append(index)
    for a, b in _CROSS:
        for x in holders.get(a, []):
            if any(y != x for y in holders.get(b, [])):
                return True
    return False


def _problem(nodes: list[_Node]) -> str | None:
    for node in nodes:
        for alt in node.alts:
            found = _problem(alt)
            if found:
                return found
        if not (node.alts and node.repeated):
            continue
        for alt in node.alts:
            if any(n.repeated for n in alt) and all(n.optional or n.repeated for n in alt):
                return "a repeated group contains only a repeated item (nested quantifiers)"
        if _branches_overlap([_first(alt) for alt in node.alts]):
            return "a repeated alternation has branches that can match the same text"
    return None


def backtracking_problem(pattern: str) -> str | None:
    """Why ``pattern`` can backtrack catastrophically, or None when no risky shape is found.

    Raises :class:`TooComplex` when the pattern is beyond the analysis budget.
    """
    depth = group_depth(pattern)
    if depth > MAX_PATTERN_DEPTH:
        raise TooComplex(f"groups nested {depth} deep (at most {MAX_PATTERN_DEPTH})")
    alts, _ = _parse(pattern)
    return _problem([_Node(alts=alts)])


@functools.lru_cache(maxsize=4096)
def backtracking_verdict(pattern: str) -> tuple[str | None, str | None]:
    """(problem, why too complex) of :func:`backtracking_problem`, once per distinct pattern.

    Registries repeat the same patterns (ids, dates, codes) across many tools; the analysis is a
    pure function of the text, so a lint run analyses each distinct pattern once.
    """
    try:
        return backtracking_problem(pattern), None
    except TooComplex as exc:
        return None, str(exc)


_NON_PORTABLE = (
    (re.compile(r"\(\?<[=!]"), "lookbehind"),
    (re.compile(r"\(\?[=!]"), "lookahead"),
    (re.compile(r"(?<!\\)\\[1-9]|\\k<"), "a backreference"),
    (re.compile(r"\(\?>|[*+?}]\+"), "an atomic group or possessive quantifier"),
    (re.compile(r"\(\?[a-zA-Z]+[):]"), "inline flags"),
    (re.compile(r"(?<!\\)\\[AZz]"), "\\A / \\Z / \\z anchors"),
    (re.compile(r"\(\?P"), "Python-only named groups (?P...)"),
)


@functools.lru_cache(maxsize=4096)
def non_portable(pattern: str) -> str | None:
    """The first construct in ``pattern`` that RE2-based or ECMA validators reject, or None."""
    for regex, what in _NON_PORTABLE:
        if regex.search(pattern):
            return what
    return None
