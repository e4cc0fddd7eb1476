"""The HTTP server as an OAuth 2.1 resource server (the MCP authorization spec, RFC 9728).

:class:`ProtectedResource` (ASGI middleware, in front of the MCP app):

* ``GET /.well-known/oauth-protected-resource`` (and with the MCP path appended, as the spec's
  clients ask first): the RFC 9728 metadata, no token needed;
* every other request needs ``Authorization: Bearer <JWT>`` that :class:`TokenVerifier`
  accepts; without one **401** with ``WWW-Authenticate: Bearer resource_metadata="..."`` (plus
  ``error="invalid_token"`` for a bad one), so a client discovers the authorization server;
* a token lacking ``auth.scopes``: **403** ``error="insufficient_scope"``;
* the verified :class:`~toolctl.principal.Principal` goes into the request's ASGI scope
  where the MCP handlers find it (:func:`toolctl.server.identity.caller`);
* a 2025-11-25 session belongs to the principal whose request opened it: another principal's
  request naming it gets 404, as for a session that does not exist;
* when the keys cannot be fetched, requests get **503** (fail closed, and not a 401 that would
  send every client to log in again) and ``/readyz`` says why.

:class:`ToolScopes` (inside, where the body is already read): a ``tools/call`` of a tool whose
``scopes`` the token lacks gets **403** ``insufficient_scope`` naming the scopes, the spec's
step-up signal.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from toolctl.principal import Principal
from toolctl.server.identity import PRINCIPAL_KEY
from toolctl.server.tokens import InvalidToken, KeysUnavailable, TokenVerifier

if TYPE_CHECKING:
    from toolctl.authconfig import AuthSettings
    from toolctl.server.toolset import ToolSet

log = logging.getLogger("toolctl.server.auth")

METADATA_PATH = "/.well-known/oauth-protected-resource"
UNAVAILABLE = json.dumps(
    {
        "error": "temporarily_unavailable",
        "error_description": "the authorization server's keys cannot be fetched",
    }
).encode()
MAX_BOUND_SESSIONS = 100_000  # session bindings kept (the oldest go first)


def resource_metadata(settings: AuthSettings, scopes: list[str]) -> dict[str, Any]:
    """The RFC 9728 document of this server."""
    return {
        "resource": settings.audience,
        "authorization_servers": [settings.issuer],
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
        "resource_name": "toolctl MCP server",
    }


def _quoted(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


class ProtectedResource:
    """ASGI middleware: bearer JWTs for every request but the metadata."""

    def __init__(
        self,
        app: Any,
        verifier: TokenVerifier,
        mcp_path: str,
        current: Callable[[], ToolSet],
    ) -> None:
        self.app = app
        self.verifier = verifier
        self.settings = verifier.settings
        self._current = current
        audience_path = urlsplit(self.settings.audience).path.rstrip("/")
        self._sessions: dict[str, str] = {}  # 2025-11-25 session id -> its principal's key
        self._paths = {METADATA_PATH, METADATA_PATH + mcp_path, METADATA_PATH + audience_path}
        self._mcp_path = mcp_path

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        if scope.get("path") in self._paths:
            await self._metadata(scope, send)
            return
        token = _bearer(scope)
        if token is None:
            await self._challenge(scope, send, None, "no bearer token")
            return
        try:
            principal = await self.verifier.verify(token)
        except InvalidToken as exc:
            await self._challenge(scope, send, "invalid_token", str(exc))
            return
        except KeysUnavailable as exc:
            log.error("refusing a request: %s", exc.message)
            body = UNAVAILABLE
            await _send(send, 503, body, [(b"retry-after", b"5")])
            return
        needed = self.settings.scopes
        if needed and not principal.has_scopes(needed):
            await insufficient_scope(send, self._base(scope), needed)
            return
        session = _header(scope, b"mcp-session-id")
        if session is not None:
            if self._sessions.get(session, principal.key) != principal.key:
                # another principal's 2025-11-25 session: as if it did not exist
                await _send(send, 404, b'{"error":"session not found"}')
                return
            await self.app({**scope, PRINCIPAL_KEY: principal}, receive, send)
            return
        await self.app({**scope, PRINCIPAL_KEY: principal}, receive, self._binding(send, principal))

    def _binding(self, send: Any, principal: Principal) -> Any:
        """``send`` that binds a session the response opens to ``principal``."""
        sessions = self._sessions

        async def bind(message: Any) -> None:
            if message["type"] == "http.response.start":
                for name, value in message.get("headers") or ():
                    if name.lower() == b"mcp-session-id":
                        if len(sessions) >= MAX_BOUND_SESSIONS:
                            sessions.pop(next(iter(sessions)))  # the oldest binding
                        sessions[value.decode("latin-1")] = principal.key
            await send(message)

        return bind

    def _base(self, scope: Any) -> str:
        return resource_base(self.settings, scope, self._mcp_path)

    async def _metadata(self, scope: Any, send: Any) -> None:
        if scope.get("method") not in ("GET", "HEAD"):
            await _send(send, 405, b'{"error":"method not allowed"}')
            return
        tool_scopes = (s for needed in self._current().scopes.values() for s in needed)
        scopes = sorted({*self.settings.scopes, *tool_scopes})
        document = resource_metadata(self.settings, scopes)
        body = json.dumps(document).encode()
        extra = [(b"cache-control", b"max-age=300"), (b"access-control-allow-origin", b"*")]
        await _send(send, 200, body, extra)

    async def _challenge(self, scope: Any, send: Any, error: str | None, why: str) -> None:
        value = f'Bearer resource_metadata="{self._base(scope)}"'
        if self.settings.scopes:  # what to ask for first (the spec's scope selection)
            value += f', scope="{_quoted(" ".join(self.settings.scopes))}"'
        if error is not None:
            value += f', error="{error}", error_description="{_quoted(why)}"'
        body = json.dumps({"error": error or "unauthorized", "error_description": why})
        await _send(send, 401, body.encode(), [(b"www-authenticate", value.encode())])


def resource_base(settings: AuthSettings, scope: Any, mcp_path: str) -> str:
    """The URL of this resource's metadata: under the configured audience's origin (the URL
    clients reach the server at), with the MCP path appended as RFC 9728 §3.1 puts it."""
    del scope  # the Host header is the client's to choose; the audience is the operator's
    parts = urlsplit(settings.audience)
    path = parts.path.rstrip("/") or mcp_path
    return f"{parts.scheme}://{parts.netloc}{METADATA_PATH}{path}"


def _header(scope: Any, wanted: bytes) -> str | None:
    for name, value in scope.get("headers") or ():
        if name == wanted:
            return bytes(value).decode("latin-1")
    return None


def _bearer(scope: Any) -> str | None:
    given = _header(scope, b"authorization")
    if given is None:
        return None
    kind, _, token = given.partition(" ")
    return token.strip() if kind.lower() == "bearer" and token.strip() else None


async def insufficient_scope(send: Any, metadata_url: str, scopes: tuple[str, ...]) -> None:
    """403 naming the ``scopes`` the request needs (RFC 6750 §3.1; the MCP step-up flow)."""
    wanted = " ".join(scopes)
    value = (
        f'Bearer error="insufficient_scope", scope="{_quoted(wanted)}", '
        f'resource_metadata="{metadata_url}"'
    )
    body = json.dumps(
        {"error": "insufficient_scope", "error_description": f"this needs the scopes: {wanted}"}
    )
    await _send(send, 403, body.encode(), [(b"www-authenticate", value.encode())])


async def _send(send: Any, status: int, body: bytes, extra: list[tuple[bytes, bytes]] = []) -> None:  # noqa: B006
    headers = [
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
        *extra,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class ToolScopes:
    """403 for a ``tools/call`` of a tool whose ``scopes`` the request's principal lacks,
    checked by :class:`toolctl.server.dispatch.Dispatch` once the body is whole and parsed.
    Costs nothing when the principal may call every served tool (the usual case)."""

    def __init__(
        self, current: Callable[[], ToolSet], settings: AuthSettings, mcp_path: str
    ) -> None:
        self._current = current
        self._settings = settings
        self._mcp_path = mcp_path

    async def refused(self, scope: Any, send: Any, message: Any) -> bool:
        """Whether the request (``message``: its body, parsed) was refused and answered 403."""
        principal = scope.get(PRINCIPAL_KEY)
        if principal is None or message is None:
            return False
        toolset = self._current()
        hidden = toolset.hidden_from(principal)
        needed = _refused(message, hidden, toolset) if hidden else None
        if not needed:
            return False
        wanted = tuple(dict.fromkeys((*self._settings.scopes, *needed)))
        url = resource_base(self._settings, scope, self._mcp_path)
        await insufficient_scope(send, url, wanted)
        return True


def _refused(message: Any, hidden: frozenset[str], toolset: ToolSet) -> tuple[str, ...] | None:
    """The scopes a ``tools/call`` in ``message`` needs for a tool in ``hidden``, or None."""
    for one in message if isinstance(message, list) else [message]:
        if not isinstance(one, dict) or one.get("method") != "tools/call":
            continue
        params = one.get("params")
        if isinstance(params, dict):
            name = params.get("name")
            if isinstance(name, str) and name in hidden:
                return toolset.scopes[name]
    return None
