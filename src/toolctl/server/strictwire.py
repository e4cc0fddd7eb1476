"""Duplicate keys in ``tools/call`` arguments, caught at the transport.

The SDK parses every message with a plain JSON parser, so ``{"a": 1, "a": 2}`` reaches the
handler as ``{"a": 2}``: the duplicate is gone before toolctl sees it. The transports (stdio
lines, HTTP bodies, in :mod:`toolctl.server.dispatch`) pass each ``tools/call`` message through
:func:`guard` first. When the message holds a duplicate key, the arguments' JSON text (every pair
kept, numbers as written) is put into ``params._meta["dev.toolctl/rawArguments"]`` and the call
handler hands that text to the runtime, which refuses it exactly as ``toolctl run --input``
does. Size, depth, non-finite numbers
and lone surrogates survive parsing, so the runtime re-checks those on the parsed arguments.

A client cannot choose the text: a key of that name the client sent is removed.
"""

from __future__ import annotations

import json
from typing import Any

RAW_ARGUMENTS_KEY = "dev.toolctl/rawArguments"
_RAW_BYTES = RAW_ARGUMENTS_KEY.encode()


class _Duplicate(Exception):
    pass


class _Pairs(list[tuple[str, Any]]):
    """A JSON object with every pair, duplicates included."""


class _Literal(str):
    """A number (or NaN/Infinity) exactly as the client wrote it."""


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out = dict(pairs)
    if len(out) != len(pairs):
        raise _Duplicate
    return out


def _might_be_call(text: bytes) -> bool:
    # A method name can hide behind JSON escapes ("tools\/call"): any backslash means look.
    return b"tools/call" in text or b"\\" in text or _RAW_BYTES in text


def guard(text: bytes) -> bytes | None:
    """``text`` (one JSON-RPC message or batch) rewritten for the call handler, or None when
    it passes unchanged (the usual case: no duplicate key, no client-sent raw text)."""
    return checked(text)[0]


def checked(text: bytes) -> tuple[bytes | None, Any]:
    """:func:`guard`'s answer and the message it parsed, so that the checks after it need not
    parse the text again: ``(rewritten, message)``. ``message`` is the JSON value of the text
    the SDK will read (the rewritten one, if any), or None when ``text`` cannot hold a
    ``tools/call`` (then it was not parsed) or is not JSON."""
    if not _might_be_call(text):
        return None, None
    try:
        parsed = json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate:
        pass
    except (ValueError, RecursionError):
        return None, None  # not JSON: the SDK answers with a parse error
    else:
        if not _sends_raw_key(parsed):  # looked up parsed: the key may be written with escapes
            return None, parsed
    rewritten = _rewrite(text)
    return rewritten, (None if rewritten is None else json.loads(rewritten))


def _rewrite(text: bytes) -> bytes | None:
    """``text`` with the raw arguments of its ``tools/call`` messages in their ``_meta`` (and
    any client-sent copy removed)."""
    try:
        kept = json.loads(
            text,
            object_pairs_hook=_Pairs,
            parse_float=_Literal,
            parse_int=_Literal,
            parse_constant=_Literal,
        )
        message = json.loads(text)
    except (ValueError, RecursionError):
        return None
    if isinstance(message, list) and isinstance(kept, list) and len(kept) == len(message):
        for one, pairs in zip(message, kept, strict=True):
            _annotate(one, pairs)
    else:
        _annotate(message, kept)
    return json.dumps(message, separators=(",", ":")).encode()


def _sends_raw_key(message: Any) -> bool:
    """Whether a parsed message (or batch) carries ``_meta["dev.toolctl/rawArguments"]``."""
    for one in message if isinstance(message, list) else (message,):
        params = one.get("params") if isinstance(one, dict) else None
        meta = params.get("_meta") if isinstance(params, dict) else None
        if isinstance(meta, dict) and RAW_ARGUMENTS_KEY in meta:
            return True
    return False


def _annotate(message: Any, kept: Any) -> None:
    """Put the raw arguments of a ``tools/call`` request into its ``_meta`` (or strip a
    client-sent copy)."""
    if not isinstance(message, dict):
        return
    params = message.get("params")
    if not isinstance(params, dict):
        return
    meta = params.get("_meta")
    if isinstance(meta, dict):
        meta.pop(RAW_ARGUMENTS_KEY, None)
    if message.get("method") != "tools/call":
        return
    raw = _find(_find(kept, "params"), "arguments")
    if raw is _MISSING or not _has_duplicate(raw):
        return
    if not isinstance(meta, dict):
        meta = params["_meta"] = {}
    meta[RAW_ARGUMENTS_KEY] = _encode(raw)


_MISSING = object()


def _find(node: Any, key: str) -> Any:
    """The last value of ``key`` in a kept object (what the SDK's parser keeps)."""
    found: Any = _MISSING
    if isinstance(node, _Pairs):
        for k, v in node:
            if k == key:
                found = v
    return found


def _has_duplicate(node: Any) -> bool:
    if isinstance(node, _Pairs):
        keys = [k for k, _ in node]
        return len(set(keys)) != len(keys) or any(_has_duplicate(v) for _, v in node)
    if isinstance(node, list):
        return any(_has_duplicate(v) for v in node)
    return False


def _encode(node: Any) -> str:
    """JSON text of a kept value: every pair in order, numbers as written."""
    if isinstance(node, _Pairs):
        return "{" + ",".join(f"{json.dumps(k)}:{_encode(v)}" for k, v in node) + "}"
    if isinstance(node, list):
        return "[" + ",".join(_encode(v) for v in node) + "]"
    if isinstance(node, _Literal):
        return str.__str__(node)
    return json.dumps(node)  # escaped: a lone surrogate must reach the runtime's check
