"""``reverse``: the Mastra ``createTool()`` seed's example tool, reversing a string."""

from __future__ import annotations

import unicodedata
from typing import Any


def reverse(data: dict[str, Any]) -> dict[str, str]:
    """Reverse ``data["input"]`` by user-perceived characters.

    Combining marks stay attached to their base letter: ``"cafe"`` + U+0301 (café) reverses to
    ``"éfac"``, not to a stray accent followed by ``"efac"``.
    """
    clusters: list[str] = []
    for char in data["input"]:
        if clusters and unicodedata.combining(char):
            clusters[-1] += char
        else:
            clusters.append(char)
    return {"output": "".join(reversed(clusters))}
