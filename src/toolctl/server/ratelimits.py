"""``429 Too Many Requests`` with ``Retry-After`` for a ``tools/call`` past its rate limit.

The limit itself (``limits: {callsPerMinute: N}``, per caller and tool) is the runtime's
(:mod:`toolctl.runtime.ratelimit`). Over Streamable HTTP a call's response has started (an
SSE
stream, status 200) before the pipeline runs, so the HTTP status has to be decided here, at the
edge: a POST whose JSON-RPC message is a new ``tools/call`` of a limited tool is charged to its
bucket before the MCP session sees it. Refused, the client gets ``429``, ``Retry-After`` in
whole seconds and a JSON-RPC error naming the limit; allowed, the request is marked so that the
call handler does not charge it a second time (``CallOptions.rate_charged``). Everything else
(other methods, batches, the follow-up of an input-required round trip, bodies too large to
have been buffered) passes through untouched (the body is the one
:class:`~toolctl.server.dispatch.Dispatch` read and parsed once for every check); the pipeline
still charges a call that reaches it uncharged, and refuses it with the error result
``rate_limited``.

The caller is the SDK's authenticated user on the request (``scope["user"]``, what the SDK's
bearer-auth middleware sets and what it binds sessions to); without one, the shared local
bucket.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import TYPE_CHECKING, Any

from toolctl.principal import Principal
from toolctl.runtime import ratelimit
from toolctl.server.identity import PRINCIPAL_KEY

if TYPE_CHECKING:
    from toolctl.server.toolset import ToolSet
    from toolctl.spec import ToolSpec

log = logging.getLogger("toolctl.server")

RATE_CHARGED = "toolctl.rate_charged"  # set on the ASGI scope of a call charged here
RATE_LIMITED_CODE = -32029  # a server-defined JSON-RPC error code (-32000 to -32099)

Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]


def principal_of(scope: Message) -> Principal | None:
    """The verified caller of an HTTP request, or None.

    The principal :class:`~toolctl.server.resource.ProtectedResource` verified wins; else a
    ``principal`` attribute on ``scope["user"]``; else the SDK's ``AuthenticatedUser`` (its
    access token's issuer, subject and client, by the SDK's own ``principal_components``, as
    the SDK identifies a session's owner)."""
    verified = scope.get(PRINCIPAL_KEY)
    if isinstance(verified, Principal):
        return verified
    user = scope.get("user")
    found = getattr(user, "principal", None)
    if isinstance(found, Principal):
        return found
    token = getattr(user, "access_token", None)
    if token is None:
        return None
    from mcp.server.auth.provider import principal_components

    client_id, issuer, subject = principal_components(token)
    who = subject or f"client:{client_id}"  # a machine client without a subject
    return Principal(issuer or "", who, client_id, frozenset(token.scopes or ()))


def charged(request: Any) -> bool:
    """Whether the HTTP request a call came in (``ctx.request``; None over stdio) was already
    charged to the tool's rate limit here."""
    scope = getattr(request, "scope", None)
    return bool(scope and scope.get(RATE_CHARGED))


def new_call(message: Any) -> tuple[Any, str] | None:
    """``(id, tool name)`` of a parsed JSON-RPC request that starts a new ``tools/call``, else
    None (a batch, another method, the follow-up of an input-required round trip)."""
    if not isinstance(message, dict) or message.get("method") != "tools/call":
        return None
    params = message.get("params")
    if not isinstance(params, dict) or not isinstance(params.get("name"), str):
        return None
    if params.get("requestState") is not None:  # continues a run that was already charged
        return None
    return message.get("id"), params["name"]


class RateLimits:
    """Charges each new ``tools/call`` of a limited tool to its bucket, at the HTTP edge
    (:class:`toolctl.server.dispatch.Dispatch` calls :meth:`charge` with the parsed body)."""

    def __init__(self, current: Callable[[], ToolSet]) -> None:
        self.current = current
        # which served tools have a limit, worked out once per toolset (a reload swaps it)
        self._limited: tuple[ToolSet | None, frozenset[str]] = (None, frozenset())

    def limited(self, toolset: ToolSet) -> frozenset[str]:
        """The names of ``toolset``'s tools that have a rate limit."""
        known, names = self._limited
        if known is not toolset:
            from toolctl.runtime.pipeline.start import site_of

            site = site_of(toolset.registry)
            names = frozenset(
                name
                for name, spec in toolset.specs.items()
                if ratelimit.limit_of(spec, site) is not None
            )
            self._limited = (toolset, names)
        return names

    async def charge(self, scope: Message, send: Send, message: Any) -> Message | None:
        """The scope the request goes on with (marked charged when it was charged here), or
        None when it is past its limit and was answered ``429`` on ``send``. ``message``: the
        request's body, parsed."""
        found = new_call(message)
        if found is None:
            return scope
        request_id, name = found
        toolset = self.current()
        if name not in self.limited(toolset):
            return scope
        refused = await self._take(toolset, toolset.specs[name], scope)
        if refused is not None:
            await _too_many(send, request_id, refused)
            return None
        return {**scope, RATE_CHARGED: True}

    async def _take(
        self, toolset: ToolSet, spec: ToolSpec, scope: Message
    ) -> ratelimit.RateLimited | None:
        from toolctl.runtime.pipeline.start import resolve_store, site_of

        registry = toolset.registry
        store, site, principal = resolve_store(registry), site_of(registry), principal_of(scope)
        if not ratelimit.is_shared(store):
            return ratelimit.take(store, spec, site, principal)
        import anyio

        # a PostgreSQL round trip: off the event loop
        return await anyio.to_thread.run_sync(ratelimit.take, store, spec, site, principal)


async def _too_many(send: Send, request_id: Any, refused: ratelimit.RateLimited) -> None:
    log.info("rate limited a call of %s (%s)", refused.tool, refused.message())
    error = refused.error()
    body = json.dumps(
        {
            "jsonrpc": "2.0",
            "id": request_id,
            "error": {
                "code": RATE_LIMITED_CODE,
                "message": refused.message(),
                "data": {"code": error.code, **error.details[0]},
            },
        },
        separators=(",", ":"),
    ).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 429,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                (b"retry-after", str(refused.retry_seconds).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
