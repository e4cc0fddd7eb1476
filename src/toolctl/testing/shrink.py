"""Shrinking a failing input to a minimal one that still fails the same way.

Greedy delta-debugging over JSON: try simpler candidates (drop keys and items, shorten text,
pull numbers toward zero, lift a nested value up a level) and keep the first that still fails,
until none does or the budget of calls runs out. ``keep`` decides which candidates are admissible
(for example "still valid against the input schema") before ``fails`` spends a call on them.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator
from typing import Any

DEFAULT_BUDGET = 150


def candidates(value: Any) -> Iterator[Any]:
    """Simpler variants of ``value``, most aggressive first."""
    if isinstance(value, dict):
        for key in value:
            yield {k: v for k, v in value.items() if k != key}
        for key, item in value.items():
            for smaller in candidates(item):
                yield {**value, key: smaller}
    elif isinstance(value, list):
        if value:
            yield []
        if len(value) > 1:
            yield value[: len(value) // 2]
        for i in range(len(value)):
            yield value[:i] + value[i + 1 :]
        for i, item in enumerate(value):
            for smaller in candidates(item):
                yield [*value[:i], smaller, *value[i + 1 :]]
    elif isinstance(value, bool):
        if value:
            yield False
    elif isinstance(value, int):
        yield from _smaller_ints(value)
    elif isinstance(value, float):
        if value != int(value) and abs(value) < 1e15:
            yield int(value)
        yield from (v for v in (0.0, round(value, 1), value / 2) if abs(v) < abs(value))
    elif isinstance(value, str):
        yield from _shorter_strings(value)


def _smaller_ints(n: int) -> Iterator[int]:
    seen = set()
    for v in (0, 1, -1, n // 2, n - 1 if n > 0 else n + 1, abs(n)):
        if (abs(v) < abs(n) or (v > 0 > n and v == -n)) and v not in seen:
            seen.add(v)
            yield v


def _shorter_strings(s: str) -> Iterator[str]:
    if not s:
        return
    seen: set[str] = set()
    options = ["", s[0], s[: len(s) // 2], s[len(s) // 2 :], s[1:], s[:-1]]
    options += [s.replace(ch, "a") for ch in dict.fromkeys(s) if ch != "a"][:8]
    for t in options:
        if (len(t) < len(s) or t < s) and t not in seen:
            seen.add(t)
            yield t


def _size(value: Any) -> tuple[int, int]:
    """(length, complexity): shrinking must strictly lower this, so it always ends."""
    if isinstance(value, dict):
        parts = [(len(k), 0) for k in value] + [_size(v) for v in value.values()]
    elif isinstance(value, list):
        parts = [_size(v) for v in value]
    elif isinstance(value, str):
        return 1 + len(value), sum(ch != "a" for ch in value)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        return 1 + len(str(abs(value))), int(value < 0) + int(min(abs(value), 1e9))
    else:
        return 1, int(bool(value))
    return 1 + sum(p[0] for p in parts), sum(p[1] for p in parts)


async def shrink(
    value: Any,
    fails: Callable[[Any], Awaitable[bool]],
    keep: Callable[[Any], bool],
    budget: int = DEFAULT_BUDGET,
) -> tuple[Any, int]:
    """The smallest variant of ``value`` found that ``keep`` admits and still ``fails``.

    Returns it with the number of calls of ``fails`` spent. ``value`` itself must fail.
    """
    calls = 0
    improved = True
    while improved and calls < budget:
        improved = False
        for cand in candidates(value):
            if calls >= budget:
                break
            if _size(cand) >= _size(value) or not keep(cand):
                continue
            calls += 1
            if await fails(cand):
                value, improved = cand, True
                break
    return value, calls
