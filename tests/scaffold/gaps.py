"""Functions that say too little for a faithful declaration: `toolctl new` reports each gap."""

from __future__ import annotations

from collections.abc import Callable


def untyped(query, limit: int = 5):  # type: ignore[no-untyped-def]
    """Search with an untyped parameter and no return annotation."""
    return {"query": query, "limit": limit}


def variadic(*names: str, **options: bool) -> int:
    """Count names given as *args."""
    return len(names)


def callback(fn: Callable[[int], int], value: int) -> int:
    """Apply a callback: a callable has no JSON form."""
    return fn(value)


def undocumented(x: int) -> int:
    return x


class Service:
    def search(self, query: str) -> list[str]:
        """Search through an instance: `new` cannot make one."""
        return [query]

    @staticmethod
    def ping(host: str) -> bool:
        """Check that a host answers (a staticmethod works like a function)."""
        return bool(host)
