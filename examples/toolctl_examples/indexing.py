"""``index_files``: count files, lines, words and bytes under a directory (a long-running tool).

Declared ``background`` so a caller gets a run id at once. The handler lists the files first, then
reads them one by one, reporting ``ctx.progress(done, total, path)`` and checking ``ctx.abort``
between files, so a cancelled or timed-out run stops promptly. Hidden directories, ``__pycache__``
and ``node_modules`` are skipped; binary files (a NUL byte in the first 8 KiB) are counted as
skipped.
"""

from __future__ import annotations

import fnmatch
import os
from pathlib import Path
from typing import Any

from toolctl_examples._context import Context

SKIP_DIRS = frozenset({"__pycache__", "node_modules"})
SNIFF_BYTES = 8192
TOP = 5


def index_files(data: dict[str, Any], ctx: Context) -> dict[str, Any]:
    """Walk ``data["path"]`` and return totals, per-extension counts and the largest files."""
    root = Path(data["path"]).expanduser()
    if not root.is_dir():
        raise NotADirectoryError(f"{data['path']!r} is not a directory")
    include, limit = data.get("include", ["*"]), data.get("maxFiles", 10_000)
    with ctx.observe.span("list_files", root=str(root)):
        files, truncated = list_files(root, include, limit)
    totals = {"files": 0, "lines": 0, "words": 0, "bytes": 0, "skipped": 0}
    by_extension: dict[str, dict[str, int]] = {}
    sizes: list[tuple[int, str]] = []
    for done, path in enumerate(files, start=1):
        ctx.abort.raise_if_aborted()
        relative = path.relative_to(root).as_posix()
        counts = count_file(path)
        if counts is None:
            totals["skipped"] += 1
        else:
            lines, words, size = counts
            totals["files"] += 1
            totals["lines"] += lines
            totals["words"] += words
            totals["bytes"] += size
            ext = by_extension.setdefault(path.suffix or "(none)", {"files": 0, "lines": 0})
            ext["files"] += 1
            ext["lines"] += lines
            sizes.append((lines, relative))
        ctx.progress(done, len(files), relative)
    sizes.sort(key=lambda item: (-item[0], item[1]))
    ctx.observe.log("indexed", root=str(root), **totals)
    return {
        "root": str(root),
        **totals,
        "truncated": truncated,
        "byExtension": dict(sorted(by_extension.items())),
        "largest": [{"path": p, "lines": n} for n, p in sizes[:TOP]],
    }


def list_files(root: Path, include: list[str], limit: int) -> tuple[list[Path], bool]:
    """Files under ``root`` whose name matches one of ``include``, sorted; at most ``limit``."""
    found: list[Path] = []
    for current, dirs, names in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIP_DIRS)
        for name in sorted(names):
            if any(fnmatch.fnmatch(name, pattern) for pattern in include):
                if len(found) == limit:
                    return found, True
                found.append(Path(current) / name)
    return found, False


def count_file(path: Path) -> tuple[int, int, int] | None:
    """``(lines, words, bytes)`` of a text file, or None for a binary or unreadable one."""
    lines = words = size = 0
    try:
        with open(path, "rb") as handle:
            if b"\0" in handle.read(SNIFF_BYTES):
                return None
            handle.seek(0)
            for raw in handle:
                lines += 1
                size += len(raw)
                words += len(raw.split())
    except OSError:
        return None
    return lines, words, size


def summary(output: dict[str, Any]) -> dict[str, Any]:
    """``toModelOutput`` callable: one line of totals plus the largest files, as text."""
    largest = ", ".join(f"{item['path']} ({item['lines']})" for item in output["largest"])
    keys = ("files", "lines", "words", "bytes")
    counts = ", ".join(_plural(output[key], key[:-1]) for key in keys)
    text = f"{counts} under {output['root']}"
    if output["skipped"]:
        text += f"; {_plural(output['skipped'], 'binary or unreadable file')} skipped"
    if output["truncated"]:
        text += "; stopped at maxFiles"
    return {"type": "text", "value": f"{text}. Largest: {largest or 'none'}."}


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"
