"""Values worked out once per object: :class:`PerObject`."""

from __future__ import annotations

from collections.abc import Callable
from typing import Generic, TypeVar

K = TypeVar("K")
V = TypeVar("V")


class PerObject(Generic[K, V]):
    """``make(key)``, made once per key *object* and then looked up by identity.

    For frozen things (tool specs, their schemas, a loaded registry): identity is a cheap key
    where hashing the content would cost more than the work saved. The entry holds the key, so
    its id stays unique while it is cached; past ``limit`` entries the cache starts over.
    """

    def __init__(self, make: Callable[[K], V], limit: int = 4096) -> None:
        self._make = make
        self._limit = limit
        self._found: dict[int, tuple[K, V]] = {}

    def __call__(self, key: K) -> V:
        found = self._found.get(id(key))
        if found is not None and found[0] is key:
            return found[1]
        if len(self._found) >= self._limit:
            self._found.clear()
        value = self._make(key)
        self._found[id(key)] = (key, value)
        return value
