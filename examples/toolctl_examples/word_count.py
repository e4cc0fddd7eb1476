"""``word_count``: words, lines and characters of a text."""

from __future__ import annotations

import re
from typing import Any

_WORD = re.compile(r"\w+(?:['’-]\w+)*")


def word_count(data: dict[str, Any]) -> dict[str, int]:
    """Count words, lines and characters of ``data["text"]``, like ``wc``.

    Words are runs of letters and digits; "it's" and "well-known" count as one word each.
    """
    text: str = data["text"]
    return {
        "words": len(_WORD.findall(text)),
        "lines": len(text.splitlines()),
        "characters": len(text),
    }
