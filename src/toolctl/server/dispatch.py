"""One step in front of the SDK's Streamable HTTP app for every check that reads a request.

Each of these was an ASGI middleware of its own, and each looked at the headers again, or read
and parsed the body again, for every request (``bench/bench_http.py`` measured the chain at
about 0.12 ms a call). :class:`Dispatch` makes them with one look at the headers and, for a
POST, one read and one parse of the body, in this order:

1. header values without their optional whitespace (:mod:`toolctl.server.headers`);
2. the Host and Origin headers matched exactly (:func:`~toolctl.server.security.host_allowed`,
   :func:`~toolctl.server.security.origin_allowed`): ``421``/``403``;
3. a POST body read whole (up to the size limit; a larger one is the SDK's to refuse with
   ``413``) and passed through :func:`~toolctl.server.strictwire.checked` (duplicate keys in a
   call's arguments), which parses it once for the checks below;
4. with OAuth, a ``tools/call`` of a tool whose scopes the token lacks: ``403``
   (:class:`~toolctl.server.resource.ToolScopes`);
5. a new ``tools/call`` of a rate-limited tool charged to its bucket: ``429`` when refused
   (:class:`~toolctl.server.ratelimits.RateLimits`);
6. a request that may open a session: a ``503`` from the SDK (every session busy) says when to
   retry (:func:`~toolctl.server.sessions.retry_after`).

The probes, draining (:class:`~toolctl.server.health.Lifecycle`) and authentication stay in
front of it: they answer before any of this is looked at.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Awaitable, Callable, MutableMapping
from operator import itemgetter
from typing import TYPE_CHECKING, Any

from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

from toolctl.server.headers import trim
from toolctl.server.security import HttpSecurity, host_allowed, origin_allowed
from toolctl.server.sessions import retry_after
from toolctl.server.strictwire import checked

if TYPE_CHECKING:
    from toolctl.server.ratelimits import RateLimits
    from toolctl.server.resource import ToolScopes

log = logging.getLogger("toolctl.server")

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

# A value that starts or ends with a space or tab, among the values joined by newlines (which
# no header value holds): one search in C instead of a test per header.
_EDGE_SPACE = re.compile(rb"(?:\A|\n)[ \t]|[ \t](?:\n|\Z)")
_VALUE = itemgetter(1)
_HANDSHAKES = frozenset(v.encode() for v in HANDSHAKE_PROTOCOL_VERSIONS)
_SEEN_MAX = 256  # Host/Origin values remembered with their verdict (a client chooses them)


class Dispatch:
    """ASGI middleware: the checks of the module doc, in front of ``app`` (the SDK's)."""

    def __init__(
        self,
        app: Any,
        security: HttpSecurity,
        max_body: int,
        *,
        limits: RateLimits | None = None,
        scopes: ToolScopes | None = None,
    ) -> None:
        self.app = app
        self.security = security
        self.max_body = max_body
        self.limits = limits
        self.scopes = scopes
        # verdicts on Host and Origin values already seen: a client sends the same ones on
        # every request, and matching them costs two regular-expression parses per pattern
        self._hosts: dict[bytes, bool] = {}
        self._origins: dict[bytes, bool] = {}

    async def __call__(self, scope: Message, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope.get("headers") or []
        if _EDGE_SPACE.search(b"\n".join(map(_VALUE, headers))):
            headers = trim(headers)
            scope = {**scope, "headers": headers}
        fields = dict(headers)
        if not self._host_ok(fields.get(b"host", b"")):
            await _refuse(send, 421, b"Invalid Host header")
            return
        origin = fields.get(b"origin")
        if origin is not None and not self._origin_ok(origin):
            await _refuse(send, 403, b"Invalid Origin header")
            return
        if b"mcp-session-id" not in fields and _may_open_session(fields):
            send = retry_after(send)
        if scope.get("method") != "POST":
            await self.app(scope, receive, send)
            return
        await self._post(scope, receive, send)

    async def _post(self, scope: Message, receive: Receive, send: Send) -> None:
        chunks: list[bytes] = []
        size, done, trailing = 0, False, None
        while size <= self.max_body:
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
        body = chunks[0] if len(chunks) == 1 else b"".join(chunks)
        parsed = None
        if done:
            rewritten, parsed = checked(body)
            if rewritten is not None:
                body = rewritten
                scope = _with_length(scope, len(body))
        if parsed is not None:
            if self.scopes is not None and await self.scopes.refused(scope, send, parsed):
                return
            if self.limits is not None:
                charged = await self.limits.charge(scope, send, parsed)
                if charged is None:
                    return
                scope = charged
        await self.app(scope, _Replay(body, done, trailing, receive), send)

    def _host_ok(self, host: bytes) -> bool:
        return _verdict(self._hosts, host, host_allowed, self.security.allowed_hosts)

    def _origin_ok(self, origin: bytes) -> bool:
        return _verdict(self._origins, origin, origin_allowed, self.security.allowed_origins)


def _verdict(
    seen: dict[bytes, bool],
    value: bytes,
    allowed: Callable[[str, tuple[str, ...]], bool],
    patterns: tuple[str, ...],
) -> bool:
    found = seen.get(value)
    if found is None:
        if len(seen) >= _SEEN_MAX:
            seen.clear()
        found = seen[value] = allowed(value.decode("latin-1"), patterns)
    return found


def _may_open_session(fields: dict[bytes, bytes]) -> bool:
    # Only a request without a session id, on a handshake revision (or none), can be refused
    # for want of a free session; every other request is routed elsewhere by the SDK.
    version = fields.get(b"mcp-protocol-version")
    return version is None or version in _HANDSHAKES


class _Replay:
    """The ``receive`` the SDK gets: the body read (whole, or as far as the limit), then what
    came after it, then the rest of the connection's messages."""

    __slots__ = ("_pending", "_receive")

    def __init__(self, body: bytes, done: bool, trailing: Message | None, receive: Receive) -> None:
        first = {"type": "http.request", "body": body, "more_body": not done}
        self._pending: list[Message] = [first]
        if trailing is not None:
            self._pending.append(trailing)
        self._receive = receive

    async def __call__(self) -> Message:
        pending = self._pending
        return pending.pop(0) if pending else await self._receive()


def _with_length(scope: Message, length: int) -> Message:
    headers = [(k, v) for k, v in scope.get("headers") or () if k != b"content-length"]
    headers.append((b"content-length", str(length).encode()))
    return {**scope, "headers": headers}


async def _refuse(send: Send, status: int, body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"text/plain; charset=utf-8"),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
