"""``slugify``: a URL slug from a title (disabled in the registry: non-Latin text vanishes)."""

from __future__ import annotations

import re
import unicodedata
from typing import Any


def slugify(data: dict[str, Any]) -> dict[str, str]:
    """Turn ``data["text"]`` into a lowercase ASCII slug (``"Hello, World!"`` → ``hello-world``)."""
    separator: str = data.get("separator", "-")
    ascii_text = (
        unicodedata.normalize("NFKD", data["text"]).encode("ascii", "ignore").decode("ascii")
    )
    return {"slug": re.sub(r"[^a-z0-9]+", separator, ascii_text.lower()).strip(separator)}
