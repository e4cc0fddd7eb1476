"""Static checks of ``pattern`` regexes: backtracking shapes and non-portable syntax.

A small parser builds a tree of atoms and groups with their quantifiers; no regex is compiled or
run. Two shapes make backtracking engines (Python ``re``, JavaScript, PCRE) explode:

* a repeated group whose body can match in more than one way because it is itself only a
  repeated atom (``(a+)+``, ``(\\w+\\s?)*``): star height 2 with nothing fixed to anchor it;
* a repeated alternation whose branches can start with the same character (``(a|a)+``,
  ``(\\w|\\d)*``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_UNBOUNDED = 10**9


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


def _parse(p: str, i: int = 0) -> tuple[list[list[_Node]], int]:
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
            inner, i = _parse(p, start)
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
    return alts, i


def _first(nodes: list[_Node]) -> set[str]:
    out: set[str] = set()
    for node in nodes:
        out |= {f for alt in node.alts for f in _first(alt)} if node.alts else {node.first}
        if not node.optional:
            break
    return out


def _overlap(a: set[str], b: set[str]) -> bool:
    if a & b or "any" in a | b or any(x.startswith("class:") for x in a | b):
        return bool(a and b)
    for x in a:
        for y in b:
            pair = {x.split(":")[0] if ":" in x else x, y.split(":")[0] if ":" in y else y}
            lit = (x if x.startswith("lit:") else y)[4:]
            if pair == {"word", "lit"} and (lit.isalnum() or lit == "_"):
                return True
            if pair == {"digit", "lit"} and lit.isdigit():
                return True
            if {x, y} in ({"word", "digit"},):
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
        firsts = [_first(alt) for alt in node.alts]
        for x in range(len(firsts)):
            for y in range(x + 1, len(firsts)):
                if _overlap(firsts[x], firsts[y]):
                    return "a repeated alternation has branches that can match the same text"
    return None


def backtracking_problem(pattern: str) -> str | None:
    """Why ``pattern`` can backtrack catastrophically, or None when no risky shape is found."""
    alts, _ = _parse(pattern)
    return _problem([_Node(alts=alts)])


_NON_PORTABLE = (
    (re.compile(r"\(\?<[=!]"), "lookbehind"),
    (re.compile(r"\(\?[=!]"), "lookahead"),
    (re.compile(r"(?<!\\)\\[1-9]|\\k<"), "a backreference"),
    (re.compile(r"\(\?>|[*+?}]\+"), "an atomic group or possessive quantifier"),
    (re.compile(r"\(\?[a-zA-Z]+[):]"), "inline flags"),
    (re.compile(r"(?<!\\)\\[AZz]"), "\\A / \\Z / \\z anchors"),
    (re.compile(r"\(\?P"), "Python-only named groups (?P...)"),
)


def non_portable(pattern: str) -> str | None:
    """The first construct in ``pattern`` that RE2-based or ECMA validators reject, or None."""
    for regex, what in _NON_PORTABLE:
        if regex.search(pattern):
            return what
    return None
