"""Strict JSON for tool arguments, request context, resume data and outputs.

``json.loads`` accepts things a tool must never see: duplicate keys (the last one silently wins),
``NaN``/``Infinity`` (which pass ``minimum`` checks), numbers that overflow to infinity, lone
surrogates (which later crash SQLite and UTF-8 encoders) and unbounded nesting. Everything that
reaches a handler or the state store goes through :func:`parse` or :func:`check`.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from typing import Any

from toolctl.diagnostics import json_pointer
from toolctl.errors import InvalidJSONError

MAX_BYTES = 1024 * 1024
MAX_DEPTH = 64
MAX_INT_DIGITS = 4000

_SURROGATE = re.compile("[\ud800-\udfff]")


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise InvalidJSONError(
                f"duplicate key {key!r}", hint="each key may appear once in an object"
            )
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise InvalidJSONError(
        f"non-finite number {name} is not allowed", hint="JSON numbers must be finite"
    )


def _float(text: str) -> float:
    value = float(text)
    if math.isinf(value):
        raise InvalidJSONError(f"number {text[:40]} is too large (non-finite number not allowed)")
    return value


def _int(text: str) -> int:
    if len(text) > MAX_INT_DIGITS:
        raise InvalidJSONError(
            f"integer with {len(text)} digits is too long (at most {MAX_INT_DIGITS})"
        )
    return int(text)


def parse(
    text: str | bytes,
    *,
    what: str = "arguments",
    max_bytes: int = MAX_BYTES,
    max_depth: int = MAX_DEPTH,
) -> Any:
    """Parse strict JSON; :class:`InvalidJSONError` names ``what`` and the problem."""
    size = len(text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text)
    if size > max_bytes:
        raise InvalidJSONError(f"{what} too large ({size} bytes > limit {max_bytes})")
    try:
        value = json.loads(
            text,
            object_pairs_hook=_pairs,
            parse_constant=_constant,
            parse_float=_float,
            parse_int=_int,
        )
    except InvalidJSONError as exc:
        raise InvalidJSONError(f"invalid JSON in {what}: {exc.message}", hint=exc.hint) from None
    except RecursionError:
        raise InvalidJSONError(
            f"invalid JSON in {what}: nested too deeply (limit {max_depth})"
        ) from None
    except (ValueError, UnicodeDecodeError) as exc:
        raise InvalidJSONError(
            f"invalid JSON in {what}: {exc}", hint='pass a JSON object, e.g. \'{"city": "Paris"}\''
        ) from None
    check(value, what=what, max_depth=max_depth, max_bytes=max_bytes)
    return value


def check(
    value: Any, *, what: str = "arguments", max_depth: int = MAX_DEPTH, max_bytes: int = MAX_BYTES
) -> None:
    """Raise :class:`InvalidJSONError` unless ``value`` is plain, finite, bounded JSON data.

    Bounded means what :func:`parse` enforces on text: nesting up to ``max_depth`` and a JSON
    text of at most ``max_bytes`` (so data that arrives already parsed, e.g. over MCP, meets
    the same limits as ``--input``)."""
    problem = _problem(value, max_depth, 0)
    if problem is not None:
        where, msg = problem
        raise InvalidJSONError(f"invalid JSON in {what}: {msg}" + (f" at {where}" if where else ""))
    # An escape takes at most 6 characters (\u001f): below a sixth of the limit the text
    # cannot exceed it, so only larger values pay for an exact encoding.
    if _size_floor(value, max_bytes) * 6 > max_bytes:
        size = len(dumps(value).encode("utf-8"))
        if size > max_bytes:
            raise InvalidJSONError(f"{what} too large ({size} bytes > limit {max_bytes})")


def _size_floor(value: Any, stop: int) -> int:
    """A lower bound of the compact JSON size of checked ``value``; it stops counting past
    ``stop`` (only then is the exact size worth an encoding)."""
    total, stack = 0, [value]
    while stack and total <= stop:
        item = stack.pop()
        if isinstance(item, str):
            total += len(item) + 2
        elif isinstance(item, dict):
            total += 2 + len(item)
            for key, inner in item.items():
                total += len(key) + 2
                stack.append(inner)
        elif isinstance(item, list):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += 1
    return total


def _problem(value: Any, max_depth: int, depth: int) -> tuple[str, str] | None:
    # Iterating by hand (not json.dumps) gives the path of the first problem. The common
    # leaves (str, int, bool, None) of a container are checked in its loop, not by recursion:
    # most tool calls carry a flat object of them.
    if depth > max_depth:
        return "", f"nested too deeply (limit {max_depth})"
    kind = type(value)
    if kind is dict:
        for key, item in value.items():
            if type(key) is not str and not isinstance(key, str):
                return "", f"object key {key!r} is not a string"
            if not key.isascii() and _SURROGATE.search(key):
                return "", "lone surrogate in object key"
            if _simple(item):
                continue
            found = _problem(item, max_depth, depth + 1)
            if found is not None:
                return json_pointer((key,)) + found[0], found[1]
        return None
    if kind is list:
        for i, item in enumerate(value):
            if _simple(item):
                continue
            found = _problem(item, max_depth, depth + 1)
            if found is not None:
                return f"/{i}{found[0]}", found[1]
        return None
    return _leaf_problem(value, max_depth, depth)


def _simple(item: Any) -> bool:
    """A leaf that is certainly fine (the fast path of :func:`_problem`)."""
    kind = type(item)
    if kind is str:
        return bool(item.isascii())
    if kind is int:
        return bool(item.bit_length() < MAX_INT_DIGITS * 3)
    return item is None or kind is bool


def _leaf_problem(value: Any, max_depth: int, depth: int) -> tuple[str, str] | None:
    if isinstance(value, str):
        if not value.isascii() and _SURROGATE.search(value):
            return "", "lone surrogate in string"
        return None
    if value is None or isinstance(value, bool):
        return None
    if isinstance(value, int):
        return None if value.bit_length() < MAX_INT_DIGITS * 3 else ("", "integer too long")
    if isinstance(value, float):
        return None if math.isfinite(value) else ("", "non-finite number not allowed")
    if isinstance(value, (dict, list)):  # subclasses: checked like the plain types
        return _problem(dict(value) if isinstance(value, dict) else list(value), max_depth, depth)
    return "", f"{type(value).__name__} is not a JSON type"


def dumps(value: Any, *, canonical: bool = False) -> str:
    """Compact strict JSON (``ValueError`` for NaN, ``TypeError`` for non-JSON types)."""
    return json.dumps(
        value, allow_nan=False, ensure_ascii=False, separators=(",", ":"), sort_keys=canonical
    )


def digest(value: Any) -> str:
    """SHA-256 of the canonical JSON of ``value`` (binds approvals to an exact input)."""
    return hashlib.sha256(dumps(value, canonical=True).encode("utf-8")).hexdigest()


def shorten(value: Any, limit: int = 200) -> str:
    """``value`` as JSON, cut to ``limit`` characters (for error messages)."""
    try:
        text = dumps(value)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"
