"""Draining: what a replica that is going away refuses, and what it hands over.

One :class:`Drain` per server, shared by the HTTP front (:class:`toolctl.server.health.Lifecycle`,
which sets it on the first SIGTERM) and the call handler (which reads it):

* a new ``tools/call`` is refused in every session and revision (:func:`refused_call`): over
  HTTP with 503 and ``Retry-After`` before any session sees the request, so nothing starts here
  once draining has begun;
* a call waiting for a background run on a worker stops waiting and answers with the run id
  (:func:`toolctl.server.results.handed_off_text`): the run is the worker's, and it goes on.
  The replica stopping never cancels it; only the client cancelling its call does.

Other messages of a session (the answer to an elicitation a call in flight asked, notifications,
``tools/list``) pass: the calls already here finish.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

Receive = Callable[[], Awaitable[dict[str, Any]]]

CALL_METHOD = "tools/call"


@dataclass
class Drain:
    """Whether the server is draining (set once, never cleared: a drain ends in a stop)."""

    active: bool = False


def refused_call(body: bytes) -> bool:
    """Whether an HTTP request body holds a ``tools/call`` request (alone or in a batch).

    A body that is not JSON is left to the transport, which answers it with its own error."""
    try:
        message: Any = json.loads(body)
    except (ValueError, RecursionError):
        return False
    messages = message if isinstance(message, list) else [message]
    return any(isinstance(m, dict) and m.get("method") == CALL_METHOD for m in messages)


async def read_body(receive: Receive, limit: int) -> tuple[bytes | None, Receive]:
    """The request body (None past ``limit`` bytes: the transport refuses such a body itself)
    and a ``receive`` that replays the messages read, then goes on with ``receive`` (so the app
    still sees the client disconnect)."""
    read: list[dict[str, Any]] = []
    size = 0
    while True:
        message = await receive()
        read.append(message)
        if message.get("type") != "http.request":
            break
        size += len(message.get("body", b""))
        if size > limit:
            return None, _replay(read, receive)
        if not message.get("more_body"):
            break
    body = b"".join(m.get("body", b"") for m in read if m.get("type") == "http.request")
    return body, _replay(read, receive)


def _replay(read: list[dict[str, Any]], receive: Receive) -> Receive:
    pending = list(read)

    async def again() -> dict[str, Any]:
        return pending.pop(0) if pending else await receive()

    return again
