"""Duplicate keys in ``tools/call`` arguments, caught at the transport.

The SDK parses every message with a plain JSON parser, so ``{"a": 1, "a": 2}`` reaches the
handler as ``{"a": 2}``: the duplicate is gone before toolctl sees it. The transports (stdio
lines, HTTP bodies) pass each ``tools/call`` message through :func:`guard` first. When the
message holds a duplicate key, the arguments' JSON text (every pair kept, numbers as written) is
put into ``params._meta["dev.toolctl/rawArguments"]`` and the call handler hands that text to the
runtime, which refuses it exactly as ``toolctl run --input`` does. Size, depth, non-finite numbers
and lone surrogates survive parsing, so the runtime re-checks those on the parsed arguments.

A client cannot choose the text: a key of that name the client sent is removed.
"""

from __future__ import annotations

import json
import logging
from typing import Any

log = logging.getLogger("toolctl.server")

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
    if not _might_be_call(text):
        return None
    try:
        parsed = json.loads(text, object_pairs_hook=_no_duplicates)
    except _Duplicate:
        pass
    except (ValueError, RecursionError):
        return None  # not JSON: the SDK answers with a parse error
    else:
        if not _sends_raw_key(parsed):  # looked up parsed: the key may be written with escapes
            return None
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


class StrictBodies:
    """ASGI middleware: every POST body (up to ``limit`` bytes; larger ones are the SDK's to
    refuse with 413) passes :func:`guard` before the MCP app reads it."""

    def __init__(self, app: Any, limit: int) -> None:
        self.app = app
        self.limit = limit

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http" or scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        size, done, trailing = 0, False, None
        while size <= self.limit:
            message = await receive()
            if message["type"] != "http.request":
                trailing = message
                break
            body = message.get("body", b"")
            chunks.append(body)
            size += len(body)
            if not message.get("more_body", False):
                done = True
                break
        if not done and trailing is not None and trailing["type"] == "http.disconnect":
            # The client went away mid-body: nothing to answer, nobody to answer. Passed on,
            # the SDK would log a ClientDisconnect traceback as an error for each such client.
            log.info("a client disconnected before sending its whole request; ignored")
            return
        body = b"".join(chunks)
        if done:
            guarded = guard(body)
            if guarded is not None:
                body = guarded
                scope = _with_length(scope, len(body))
        queue: list[dict[str, Any]] = [
            {"type": "http.request", "body": body, "more_body": not done}
        ]
        if trailing is not None:
            queue.append(trailing)

        async def replay() -> Any:
            return queue.pop(0) if queue else await receive()

        await self.app(scope, replay, send)


def _with_length(scope: Any, length: int) -> Any:
    headers = [(k, v) for k, v in scope.get("headers") or () if k != b"content-length"]
    headers.append((b"content-length", str(length).encode()))
    return {**scope, "headers": headers}
