"""HTTP transport safety: which Host and Origin headers to accept, and bearer-token auth.

Rules (reliability notes §2.6 and the MCP security guidance):

* the default bind is 127.0.0.1, with DNS-rebinding protection (Host and Origin checks) built
  from the bind address, always explicit (the SDK leaves it off when given no settings);
* a non-loopback bind needs ``--allowed-host`` (the names clients use to reach the server) and
  authentication: OAuth (``auth:`` / ``--auth-issuer``, see :mod:`toolctl.server.resource`) or
  ``--auth-token-env VAR`` (one bearer token read from the environment), or the server refuses
  to start;
* request bodies are capped (the SDK's 4 MiB by default).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolctl.errors import UsageError

LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
LOOPBACK_ORIGINS = ("http://127.0.0.1:*", "http://localhost:*", "http://[::1]:*")


class ServeUsageError(UsageError):
    """``toolctl serve`` options that would start an unsafe or impossible server."""


@dataclass(frozen=True)
class HttpSecurity:
    """What the HTTP transport accepts: Host and Origin patterns and the bearer token."""

    allowed_hosts: tuple[str, ...]
    allowed_origins: tuple[str, ...]
    token: str | None = None


def is_loopback(host: str) -> bool:
    """True for 127.0.0.0/8, ::1 and ``localhost``."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def _host_patterns(hosts: Sequence[str]) -> list[str]:
    out: list[str] = []
    for host in hosts:
        out.append(host)
        # A name without a port matches it on any port (and on the default port, bare).
        has_port = "]:" in host if host.startswith("[") else ":" in host
        if not has_port:
            out.append(f"{host}:*")
    return out


def _token(env_var: str | None) -> str | None:
    if env_var is None:
        return None
    value = os.environ.get(env_var, "")
    if not value.strip():
        raise ServeUsageError(
            f"--auth-token-env {env_var}: the environment variable {env_var} is not set or empty",
            hint=f"export {env_var}=<a long random token> and pass it to clients as "
            f"'Authorization: Bearer <token>'",
        )
    return value.strip()


def http_security(
    host: str,
    allowed_hosts: Sequence[str] = (),
    allowed_origins: Sequence[str] = (),
    auth_token_env: str | None = None,
    *,
    oauth: bool = False,
) -> HttpSecurity:
    """The Host/Origin/token policy for binding ``host``; refuses an unsafe non-loopback bind.
    ``oauth``: JWT access tokens are required (``auth:``), which is authentication enough."""
    if oauth and auth_token_env is not None:
        raise ServeUsageError(
            "--auth-token-env and OAuth (auth: in toolctl.yaml or --auth-issuer) exclude "
            "each other",
            hint="use OAuth for many users, or one static token for a single user, not both",
        )
    token = _token(auth_token_env)
    if is_loopback(host):
        return HttpSecurity(
            (*LOOPBACK_HOSTS, *_host_patterns(allowed_hosts)),
            (*LOOPBACK_ORIGINS, *allowed_origins),
            token,
        )
    missing = [
        flag
        for flag, ok in (
            ("--allowed-host", allowed_hosts),
            ("--auth-token-env (or OAuth: auth: / --auth-issuer)", token or oauth),
        )
        if not ok
    ]
    if missing:
        raise ServeUsageError(
            f"refusing to serve on {host}, a non-loopback address, without "
            + " and ".join(missing),
            hint="a server reachable from the network needs the host names clients use "
            "(--allowed-host mcp.example.com) and authentication: an authorization server "
            "(auth: {issuer, audience} in toolctl.yaml) or a bearer token "
            "(--auth-token-env TOOLCTL_TOKEN); or bind 127.0.0.1",
        )
    return HttpSecurity(tuple(_host_patterns(allowed_hosts)), tuple(allowed_origins), token)


# scheme://host[:port] of an Origin header, or of an allowed-origin pattern (port ``*``)
_ORIGIN = re.compile(
    r"(?P<scheme>[a-z][a-z0-9+.-]*)://(?P<host>\[[0-9a-f:.]+\]|[a-z0-9._-]+)"
    r"(?::(?P<port>[0-9]{1,5}|\*))?",
    re.IGNORECASE,
)
_HOST = re.compile(
    r"(?P<host>\[[0-9a-f:.]+\]|[a-z0-9._-]+)(?::(?P<port>[0-9]{1,5}|\*))?", re.IGNORECASE
)


def _parts(pattern: re.Pattern[str], text: str) -> tuple[str, str, str | None] | None:
    """(scheme, host, port) of ``text`` (lower case; scheme "" for a Host header), or None
    when it is not exactly that shape (a path, user info or trailing junk: never a match)."""
    found = pattern.fullmatch(text)
    if found is None:
        return None
    parts = found.groupdict()
    port = parts["port"]
    if port is not None and port != "*" and not 0 < int(port) < 65536:
        return None
    return (parts.get("scheme") or "").lower(), parts["host"].lower(), port


def _matches(pattern: re.Pattern[str], value: str, allowed: Sequence[str]) -> bool:
    """Whether ``value`` is one of ``allowed`` exactly: same scheme, host and port, where an
    allowed port ``*`` is any port (or none). Never a prefix match: with the SDK's,
    ``http://127.0.0.1:8000.evil.com`` passed as an origin of ``http://127.0.0.1:*``.
    (:class:`toolctl.server.dispatch.Dispatch` checks each request's Host and Origin with it,
    in front of the SDK's own prefix-matching checks; a request without ``Origin`` is not from a
    browser page, so it passes, as in the SDK.)"""
    got = _parts(pattern, value)
    if got is None:
        return False
    for entry in allowed:
        want = _parts(pattern, entry)
        if want is None or want[:2] != got[:2]:
            continue
        if want[2] == "*" or want[2] == got[2]:
            return True
    return False


def origin_allowed(origin: str, allowed: Sequence[str]) -> bool:
    """Whether the ``Origin`` header ``origin`` is allowed by the patterns ``allowed``."""
    return origin in allowed or _matches(_ORIGIN, origin, allowed)


def host_allowed(host: str, allowed: Sequence[str]) -> bool:
    """Whether the ``Host`` header ``host`` is allowed by the patterns ``allowed``."""
    return host in allowed or _matches(_HOST, host, allowed)


class BearerAuth:
    """ASGI middleware: every HTTP request needs ``Authorization: Bearer <token>`` (else 401)."""

    def __init__(self, app: Any, token: str) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            given = dict(scope.get("headers") or ()).get(b"authorization", b"")
            if not hmac.compare_digest(given, self._expected):
                await _unauthorized(send)
                return
        await self.app(scope, receive, send)


async def _unauthorized(send: Any) -> None:
    body = b'{"error":"unauthorized","error_description":"missing or wrong bearer token"}'
    await send(
        {
            "type": "http.response.start",
            "status": 401,
            "headers": [
                (b"content-type", b"application/json"),
                (b"www-authenticate", b'Bearer realm="toolctl"'),
                (b"content-length", str(len(body)).encode()),
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
