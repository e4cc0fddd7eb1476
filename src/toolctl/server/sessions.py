"""Bounded Streamable HTTP sessions (protocol 2025-11-25 and older keep per-client sessions).

At most ``max_sessions`` are open at once, and a session with no request in flight for
``idle_timeout`` seconds expires. When the server is full, a new client is not turned away
while some session sits idle: the session idle the longest is expired to make room (its id then
answers 404, and its client initializes again, as after an idle expiry). Only when every session
is busy (a request in flight or an open GET stream) does a new client get ``503`` with a
``Retry-After`` header. So a flood of ``initialize`` requests that are never used again cannot
lock later clients out, and costs bounded memory.

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


def session_limits(
    section: dict[str, Any], max_sessions: int | None, idle_timeout: float | None
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
    return SessionLimits(int(most), float(idle))


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


def bound_sessions(manager: Any) -> None:
    """Make the SDK's session manager expire its longest-idle session instead of refusing a
    new client when it is full."""
    admit = getattr(manager, "_admit_session", None)
    if admit is None or not hasattr(manager, "_server_instances"):
        # another SDK release: its own limit (503 when full) still holds
        log.warning("this mcp SDK cannot expire idle sessions to admit new ones")
        return

    def admit_or_expire(requestor: Any) -> Any:
        limit = manager.max_sessions
        if limit is not None and len(manager._server_instances) >= limit:
            expire_oldest_idle(manager)
        return admit(requestor)

    manager._admit_session = admit_or_expire


def expire_oldest_idle(manager: Any) -> str | None:
    """Expire the session idle the longest (no request in flight); its id, or None."""
    oldest: tuple[float, str, Any] | None = None
    for session_id, transport in manager._server_instances.items():
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


class RetryAfter:
    """ASGI middleware: a ``503`` from the MCP app (every session busy) says when to retry."""

    def __init__(self, app: Any, seconds: int = RETRY_AFTER_S) -> None:
        self.app = app
        self.header = (b"retry-after", str(seconds).encode())

    async def __call__(
        self,
        scope: Message,
        receive: Callable[[], Awaitable[Message]],
        send: Callable[[Message], Awaitable[None]],
    ) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start" and message.get("status") == 503:
                headers = list(message.get("headers") or [])
                if not any(name.lower() == b"retry-after" for name, _ in headers):
                    message = {**message, "headers": [*headers, self.header]}
            await send(message)

        await self.app(scope, receive, sending)
