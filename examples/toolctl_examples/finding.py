"""``find_text``: the lines of the text files under a directory that contain a phrase.

A background tool that asks the user one question before it is queued: whether letter case
matters is the user's call, not the model's, so the tool declares it as ``inputRequests``. The
question is answered before the run exists in a worker, and the handler reads the answer from
``ctx.answers``. Files are listed and skipped as ``index_files`` does.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from toolctl_examples._context import Context
from toolctl_examples.indexing import SNIFF_BYTES, list_files

MAX_MATCHES = 50
MAX_FILES = 10_000


def find_text(data: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Every line under ``data["path"]`` containing ``data["phrase"]`` (case as the user chose:
    a declined or dismissed question leaves case ignored)."""
    root = Path(data["path"]).expanduser()
    if not root.is_dir():
        raise NotADirectoryError(f"{data['path']!r} is not a directory")
    answer = ctx.answers.get("matchCase") or {}
    exact = answer.get("action") == "accept" and bool((answer.get("content") or {}).get("exact"))
    phrase = data["phrase"] if exact else data["phrase"].casefold()
    files, _ = list_files(root, ["*"], MAX_FILES)
    matches: list[dict[str, Any]] = []
    for path in files:
        ctx.abort.raise_if_aborted()
        for number, line in _lines(path):
            if phrase in (line if exact else line.casefold()):
                where = path.relative_to(root).as_posix()
                matches.append({"path": where, "line": number, "text": line.strip()})
    return {
        "matchCase": exact,
        "matches": matches[:MAX_MATCHES],
        "truncated": len(matches) > MAX_MATCHES,
    }


def _lines(path: Path) -> Iterator[tuple[int, str]]:
    """The numbered lines of a text file; none for a binary or unreadable one."""
    try:
        with open(path, "rb") as handle:
            if b"\0" in handle.read(SNIFF_BYTES):
                return
            handle.seek(0)
            for number, raw in enumerate(handle, start=1):
                yield number, raw.decode("utf-8", "replace")
    except OSError:
        return
