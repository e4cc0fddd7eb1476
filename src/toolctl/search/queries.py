"""A batch of queries: a JSON Lines file with one ``{"query": "..."}`` per line."""

from __future__ import annotations

import json
from pathlib import Path

from toolctl.errors import UsageError

_HINT = 'write one JSON object per line: {"query": "what the tool should do"}'


def read_queries(path: Path) -> list[str]:
    """The queries of ``path``, in order (blank lines skipped). Raises :class:`UsageError`
    naming ``FILE:LINE:COL`` for a line that is not such an object."""
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise UsageError(
            f"{path}: cannot read the queries file ({exc.strerror or exc})",
            hint="give a JSON Lines file: --queries FILE.jsonl",
        ) from None
    out: list[str] = []
    for number, line in enumerate(raw.split(b"\n"), start=1):
        if not line.strip():
            continue
        out.append(_query(path, number, line))
    return out


def _query(path: Path, number: int, line: bytes) -> str:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path}:{number}:{exc.start + 1}: not UTF-8 text", hint=_HINT) from None
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{path}:{number}:{exc.colno}: invalid JSON: {exc.msg}", hint=_HINT
        ) from None
    except RecursionError:
        raise UsageError(
            f"{path}:{number}:1: invalid JSON: nested too deeply", hint=_HINT
        ) from None
    query = value.get("query") if isinstance(value, dict) else None
    if not isinstance(query, str):
        what = 'no "query" string' if isinstance(value, dict) else "not a JSON object"
        raise UsageError(f"{path}:{number}:1: {what}", hint=_HINT)
    if not query.strip():
        raise UsageError(f"{path}:{number}:1: the query is empty", hint=_HINT)
    return query
