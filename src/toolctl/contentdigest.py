"""A digest of plain JSON content, for telling equal schemas apart without comparing them."""

from __future__ import annotations

import hashlib
import marshal
from typing import Any

# marshal's format 2 writes no back-references and no interning flag: its bytes follow from
# the content alone (types, key order and all), and marshal.loads gives that content back, so
# equal bytes mean equal content. Later formats write a string seen twice as a reference to
# its first occurrence, which depends on object identity.
_CONTENT_ONLY = 2


def content_digest(value: Any) -> bytes | None:
    """A digest of plain JSON ``value``'s exact content, key order and types included (None
    when too deeply nested to tell, or not plain data). ``marshal``, not ``json.dumps`` or
    ``repr``: the same exact bytes for the loader's values (1, 1.0, True, "1", 0.0 and -0.0
    told apart), in C, about twice as fast as ``repr`` and with no text to encode."""
    try:
        return hashlib.blake2b(marshal.dumps(value, _CONTENT_ONLY), digest_size=16).digest()
    except ValueError:  # nested deeper than marshal goes, or a value it cannot write
        return None
