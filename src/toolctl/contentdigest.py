"""A digest of plain JSON content, for telling equal schemas apart without comparing them."""

from __future__ import annotations

import hashlib
from typing import Any


def content_digest(value: Any) -> bytes | None:
    """A digest of plain JSON ``value``'s exact content, key order and types included (None
    when too deeply nested to tell). ``repr``, not ``json.dumps``: the same exact text for the
    loader's values (1, 1.0, True and "1" told apart), in C without an encoder set up per call."""
    try:
        return hashlib.blake2b(repr(value).encode(), digest_size=16).digest()
    except RecursionError:
        return None
