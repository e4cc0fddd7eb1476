"""MkDocs hook: links from a page to repository files outside docs/ (``../tools.d/x.yaml``).

They work where the Markdown is read in the repository (GitHub, an editor), but the site has no
such pages, and `mkdocs build --strict` rejects them. On the site they point into the
repository when ``repo_url`` is set, and become plain text otherwise.
"""

from __future__ import annotations

import posixpath
import re
from typing import Any

LINK = re.compile(r"\[([^\]]+)\]\(((?:\.\./)+[^)\s#]*)(#[^)\s]*)?\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    page_dir = posixpath.dirname(page.file.src_uri)
    repo_url = (config.get("repo_url") or "").rstrip("/")

    def replace(match: re.Match[str]) -> str:
        text, target, anchor = match.group(1), match.group(2), match.group(3) or ""
        path = posixpath.normpath(posixpath.join("docs", page_dir, target))
        if not path.startswith("../") and path != "..":
            if path.startswith("docs/"):
                return match.group(0)  # a page of the site: MkDocs checks it
            return f"[{text}]({repo_url}/blob/main/{path}{anchor})" if repo_url else text
        return match.group(0)

    return LINK.sub(replace, markdown)
