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


def suggest_slug(data: dict[str, Any], ctx: Any) -> dict[str, str]:
    """Ask the client's model for a short title for ``data["text"]`` (``ctx.sample``) and
    return it with its slug. The run waits until the client answers."""
    prompt = f"Suggest a short title (at most six words) for this text:\n{data['text']}"
    reply = ctx.sample(
        [{"role": "user", "content": {"type": "text", "text": prompt}}], max_tokens=30, key="title"
    )
    content = reply.get("content") if isinstance(reply, dict) else None
    title = str(content.get("text", "")).strip() if isinstance(content, dict) else ""
    return {"title": title, "slug": slugify({"text": title or data["text"]})["slug"]}
