"""Bounded Streamable HTTP sessions (protocol 2025-11-25 and older keep per-client sessions).

At most ``max_sessions`` are open at once, and a session with no request in flight for
``idle_timeout`` seconds expires. When the server is full, a new client is not turned away
while some session sits idle: the session idle the longest is expired to make room (its id then
answers 404, and its client initializes again, as after an idle expiry). Only when every session
is busy (a request in flight or an open GET stream) does a new client get ``503`` with a
``Retry-After`` header. So a flood of ``initialize`` requests that are never used again cannot
lock later clients out, and costs bounded memory.

**Per-principal share.** One caller can hold at most ``max_sessions_per_principal`` of them
(``--max-sessions-per-principal``, ``serve.maxSessionsPerPrincipal``; by default a quarter of
``max_sessions``, at least 2), so one client cannot fill the server and lock every other caller
out. A caller at its share that opens another session gets its own longest-idle session
expired; with all of its sessions busy it is refused (``503``, ``Retry-After``) while other
callers still get in. The caller is the SDK's owner of the session (the authenticated user's
issuer and subject, or its client id when the token names no subject); every unauthenticated
session (no auth, or the one static ``--auth-token-env`` token) counts as one caller.

The SDK's session manager (``mcp.server.streamable_http_manager``) keeps the count and the idle
timers; this module only changes whom it refuses.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass
from typing import Any

from toolctl.errors import ToolctlError

log = logging.getLogger("toolctl.server.sessions")

DEFAULT_MAX_SESSIONS = 1000
DEFAULT_IDLE_TIMEOUT_S = 300.0
RETRY_AFTER_S = 5

Message = MutableMapping[str, Any]


@dataclass(frozen=True)
class SessionLimits:
    """How many sessions may be open, and how long one may sit idle."""

    max_sessions: int = DEFAULT_MAX_SESSIONS
    idle_timeout: float = DEFAULT_IDLE_TIMEOUT_S
    per_principal: int | None = None  # None: default_share(max_sessions)

    @property
    def share(self) -> int:
        """The most sessions one principal may hold."""
        if self.per_principal is None:
            return default_share(self.max_sessions)
        return min(self.per_principal, self.max_sessions)


def default_share(max_sessions: int) -> int:
    """A quarter of the sessions (rounded up), at least 2 (a client reconnecting while its old
    session is still open must get in), at most all of them."""
    return min(max_sessions, max(2, -(-max_sessions // 4)))


def session_limits(
    section: dict[str, Any],
    max_sessions: int | None,
    idle_timeout: float | None,
    per_principal: int | None = None,
) -> SessionLimits:
    """The limits from the command line, else the config's ``serve:`` section, else defaults.

    ``ToolctlError`` for a config value that is not a positive number.
    """
    most = (
        max_sessions
        if max_sessions is not None
        else _setting(section, "maxSessions", DEFAULT_MAX_SESSIONS, whole=True)
    )
    idle = (
        idle_timeout
        if idle_timeout is not None
        else _setting(section, "sessionIdleTimeout", DEFAULT_IDLE_TIMEOUT_S)
    )
    share = per_principal
    if share is None and section.get("maxSessionsPerPrincipal") is not None:
        share = int(_setting(section, "maxSessionsPerPrincipal", 250, whole=True))
    return SessionLimits(int(most), float(idle), share)


def _setting(section: dict[str, Any], key: str, default: float, *, whole: bool = False) -> float:
    value = section.get(key, default)
    number = isinstance(value, (int, float)) and not isinstance(value, bool)
    if not number or (whole and not isinstance(value, int)) or not 0 < value < 10**9:
        raise ToolctlError(
            f"toolctl.yaml: serve.{key} must be a positive "
            f"{'whole number' if whole else 'number of seconds'}, not {value!r}",
            hint=f"e.g. serve: {{{key}: {default:g}}}",
        )
    return float(value)


def bound_sessions(manager: Any, share: int | None = None) -> None:
    """Make the SDK's session manager expire its longest-idle session instead of refusing a
    new client when it is full, and hold each principal to ``share`` sessions."""
    admit = getattr(manager, "_admit_session", None)
    if admit is None or not hasattr(manager, "_server_instances"):
        # another SDK release: its own limit (503 when full) still holds
        log.warning("this mcp SDK cannot expire idle sessions to admit new ones")
        return

    def admit_or_expire(requestor: Any) -> Any:
        if share is not None and not _within_share(manager, requestor, share):
            return None  # the SDK answers 503 (retry_after adds when to retry)
        limit = manager.max_sessions
        if limit is not None and len(manager._server_instances) >= limit:
            expire_oldest_idle(manager)
        return admit(requestor)

    manager._admit_session = admit_or_expire


def owner_key(requestor: Any) -> str:
    """The principal a session belongs to, from the SDK's ``AuthorizationContext`` (None: the
    one unauthenticated principal)."""
    if not requestor:
        return "anonymous"
    subject = requestor.get("subject")
    if subject:
        return f"{requestor.get('issuer') or ''} {subject}"
    return f"client {requestor.get('client_id')}"


def _within_share(manager: Any, requestor: Any, share: int) -> bool:
    """Whether ``requestor`` may open another session: under its share, or at it with one of
    its own sessions idle (expired now to make room)."""
    key = owner_key(requestor)
    owners = getattr(manager, "_session_owners", {})
    mine = [sid for sid in manager._server_instances if owner_key(owners.get(sid)) == key]
    if len(mine) < share:
        return True
    if expire_oldest_idle(manager, among=set(mine)) is not None:
        return True
    log.warning(
        "refused a new session: its principal holds %d busy session(s), its share "
        "(--max-sessions-per-principal)",
        len(mine),
    )
    return False


def expire_oldest_idle(manager: Any, among: set[str] | None = None) -> str | None:
    """Expire the session idle the longest (no request in flight), of ``among`` when given;
    its id, or None."""
    oldest: tuple[float, str, Any] | None = None
    for session_id, transport in manager._server_instances.items():
        if among is not None and session_id not in among:
            continue
        scope = getattr(transport, "idle_scope", None)
        if scope is None or scope.cancel_called or getattr(transport, "_requests_in_flight", 1):
            continue
        if oldest is None or scope.deadline < oldest[0]:
            oldest = (scope.deadline, session_id, transport)
    if oldest is None:
        return None
    _, session_id, transport = oldest
    # Forgotten at once (its id answers 404 from now on, and the slot is free for the client
    # being admitted); cancelling the idle scope ends its server task, which terminates it.
    manager._server_instances.pop(session_id, None)
    getattr(manager, "_session_owners", {}).pop(session_id, None)
    transport.idle_scope.cancel()
    log.info("session limit reached: expired the longest-idle session %s", session_id[:12])
    return str(session_id)


_RETRY_AFTER = (b"retry-after", str(RETRY_AFTER_S).encode())


def retry_after(send: Callable[[Message], Awaitable[None]]) -> Callable[[Message], Awaitable[None]]:
    """``send`` for a request that may open a session: a ``503`` from the MCP app (every
    session busy) says when to retry (wrapped only around such requests by
    :class:`toolctl.server.dispatch.Dispatch`)."""

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start" and message.get("status") == 503:
            headers = list(message.get("headers") or [])
            if not any(name.lower() == b"retry-after" for name, _ in headers):
                message = {**message, "headers": [*headers, _RETRY_AFTER]}
        await send(message)

    return sending
