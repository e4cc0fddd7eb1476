"""Small text tools: ``reverse`` (the Mastra seed's example), ``word_count`` and ``slugify``."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_WORD = re.compile(r"\w+(?:['’-]\w+)*")


def reverse(data: dict[str, Any]) -> dict[str, str]:
    """Reverse ``data["input"]`` by user-perceived characters.

    Combining marks stay attached to their base character, so ``"e\u0301"`` (é) is not torn apart.
    """
    text: str = data["input"]
    clusters: list[str] = []
    for char in text:
        if clusters and unicodedata.combining(char):
            clusters[-1] += char
        else:
            clusters.append(char)
    return {"output": "".join(reversed(clusters))}


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


def slugify(data: dict[str, Any]) -> dict[str, str]:
    """Turn ``data["text"]`` into a lowercase ASCII slug (``"Hello, World!"`` → ``hello-world``)."""
    ascii_text = (
        unicodedata.normalize("NFKD", data["text"]).encode("ascii", "ignore").decode("ascii")
    )
    slug = re.sub(r"[^a-z0-9]+", data.get("separator", "-"), ascii_text.lower())
    return {"slug": slug.strip(data.get("separator", "-"))}
