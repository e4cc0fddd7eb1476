"""HTTP transport safety: which Host and Origin headers to accept, and bearer-token auth.

Rules (reliability notes §2.6 and the MCP security guidance):

* the default bind is 127.0.0.1, with DNS-rebinding protection (Host and Origin checks) built
  from the bind address, always explicit (the SDK leaves it off when given no settings);
* a non-loopback bind needs ``--allowed-host`` (the names clients use to reach the server) and
  ``--auth-token-env VAR`` (a bearer token read from the environment), or the server refuses to
  start;
* request bodies are capped (the SDK's 4 MiB by default).
"""

from __future__ import annotations

import hmac
import ipaddress
import os
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
) -> HttpSecurity:
    """The Host/Origin/token policy for binding ``host``; refuses an unsafe non-loopback bind."""
    token = _token(auth_token_env)
    if is_loopback(host):
        return HttpSecurity(
            (*LOOPBACK_HOSTS, *_host_patterns(allowed_hosts)),
            (*LOOPBACK_ORIGINS, *allowed_origins),
            token,
        )
    missing = [
        flag
        for flag, ok in (("--allowed-host", allowed_hosts), ("--auth-token-env", token))
        if not ok
    ]
    if missing:
        raise ServeUsageError(
            f"refusing to serve on {host}, a non-loopback address, without "
            + " and ".join(missing),
            hint="a server reachable from the network needs the host names clients use "
            "(--allowed-host mcp.example.com) and a bearer token "
            "(--auth-token-env TOOLCTL_TOKEN); or bind 127.0.0.1",
        )
    return HttpSecurity(tuple(_host_patterns(allowed_hosts)), tuple(allowed_origins), token)


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
