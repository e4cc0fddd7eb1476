"""Comparing JSON values the way a test author means them, with readable differences.

Python's ``==`` says ``True == 1`` and ``1 == 1.0``; JSON says a boolean is never a number, while
``1`` and ``1.0`` are the same number. :func:`json_equal` follows JSON. :func:`differences` lists
where two values part (as JSON pointers), in exact or subset ("contains") mode, and
:func:`unified_diff` renders the whole expected-vs-actual picture.
"""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass
from typing import Any

from toolctl.diagnostics import json_pointer

JsonPath = tuple[str | int, ...]


class _Missing:
    """Marks a value that is absent (a missing key or phase), as opposed to ``null``."""

    def __repr__(self) -> str:
        return "<missing>"


MISSING: Any = _Missing()


def _kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, dict):
        return "object"
    if isinstance(value, (list, tuple)):
        return "array"
    return type(value).__name__


def json_equal(a: Any, b: Any) -> bool:
    """Equality with JSON's types: ``true != 1``, ``1 == 1.0``, key order ignored."""
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        return False
    if ka == "object":
        return a.keys() == b.keys() and all(json_equal(a[k], b[k]) for k in a)
    if ka == "array":
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    return bool(a == b)


def contains(expected: Any, actual: Any) -> bool:
    """Subset match: objects on the given keys, arrays contain the given items, text contains."""
    return not differences(expected, actual, contains=True, limit=1)


def pointer(path: JsonPath) -> str:
    """A JSON pointer for ``path`` (``/`` for the root)."""
    return json_pointer(path) or "/"


def show(value: Any, width: int = 80) -> str:
    """A short one-line JSON rendering of ``value`` for messages."""
    if value is MISSING:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True, default=repr)
    return text if len(text) <= width else text[: width - 1] + "…"


@dataclass(frozen=True)
class Difference:
    """One place where the actual value does not match: a path and a sentence."""

    path: JsonPath
    message: str

    def __str__(self) -> str:
        return f"at {pointer(self.path)}: {self.message}"


def differences(
    expected: Any,
    actual: Any,
    *,
    contains: bool = False,
    limit: int = 10,
    path: JsonPath = (),
) -> list[Difference]:
    """Where ``actual`` departs from ``expected`` (at most ``limit`` places)."""
    out: list[Difference] = []
    _diff(expected, actual, contains, path, out, limit)
    return out[:limit]


def _diff(exp: Any, act: Any, sub: bool, path: JsonPath, out: list[Difference], limit: int) -> None:
    if len(out) >= limit:
        return
    if act is MISSING:
        out.append(Difference(path, f"expected {show(exp)}, but it is absent"))
        return
    ke, ka = _kind(exp), _kind(act)
    if ke != ka:
        out.append(Difference(path, f"expected {ke} {show(exp)}, got {ka} {show(act)}"))
    elif ke == "object":
        _diff_object(exp, act, sub, path, out, limit)
    elif ke == "array":
        _diff_array(exp, act, sub, path, out, limit)
    elif sub and ke == "string":
        if exp not in act:
            out.append(Difference(path, f"expected text containing {show(exp)}, got {show(act)}"))
    elif not json_equal(exp, act):
        out.append(Difference(path, f"expected {show(exp)}, got {show(act)}"))


def _diff_object(
    exp: dict[str, Any],
    act: dict[str, Any],
    sub: bool,
    path: JsonPath,
    out: list[Difference],
    limit: int,
) -> None:
    for key, value in exp.items():
        if key not in act:
            out.append(Difference((*path, key), f"missing key (expected {show(value)})"))
        else:
            _diff(value, act[key], sub, (*path, key), out, limit)
    if not sub:
        for key in act:
            if key not in exp:
                out.append(Difference((*path, key), f"unexpected key (value {show(act[key])})"))


def _diff_array(
    exp: list[Any], act: list[Any], sub: bool, path: JsonPath, out: list[Difference], limit: int
) -> None:
    if sub:
        for i, item in enumerate(exp):
            if not any(not differences(item, a, contains=True, limit=1) for a in act):
                out.append(Difference((*path, i), f"no item matches {show(item)}"))
        return
    for i, (x, y) in enumerate(zip(exp, act, strict=False)):
        _diff(x, y, sub, (*path, i), out, limit)
    if len(exp) != len(act):
        out.append(Difference(path, f"expected {len(exp)} item(s), got {len(act)}"))


def _lines(value: Any) -> list[str]:
    if value is MISSING:
        return ["(absent)"]
    if isinstance(value, str) and "\n" in value:
        return value.splitlines()
    text = json.dumps(value, indent=2, sort_keys=True, ensure_ascii=False, default=repr)
    return text.splitlines()


def restrict(expected: Any, actual: Any) -> Any:
    """``actual`` cut down to the keys ``expected`` names, so a subset diff shows no noise."""
    if isinstance(expected, dict) and isinstance(actual, dict):
        return {
            k: restrict(expected[k], v) if k in expected else v
            for k, v in actual.items()
            if k in expected
        }
    return actual


def unified_diff(expected: Any, actual: Any, context: int = 3) -> list[str]:
    """``-expected`` / ``+actual`` lines of the pretty-printed values (no file headers)."""
    lines = list(
        difflib.unified_diff(
            _lines(expected), _lines(actual), "expected", "actual", n=context, lineterm=""
        )
    )[2:]
    # hunk headers (@@ -1,4 +1,4 @@) mean nothing here: drop the first, mark later gaps
    return [" ..." if line.startswith("@@") else line for line in lines[1:]]
