"""The ``auth:`` section of toolctl.yaml: the OAuth 2.1 authorization server whose JWT access
tokens ``toolctl serve --transport http`` accepts.

```yaml
auth:
  issuer: https://idp.example.com          # the token's iss
  audience: https://mcp.example.com/mcp    # this server's resource URI (the token's aud)
  jwksUri: https://idp.example.com/jwks    # optional; else found from the issuer's metadata
  scopes: [toolctl.call]                   # scopes every request needs (optional)
```

Checked when the project loads (``validate`` reports a bad section), and again with the
``serve --auth-*`` options on top. Plain data: the verifier lives in the server.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from toolctl.errors import ConfigError

KEYS = ("issuer", "audience", "jwksUri", "scopes")
# RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
_EXAMPLE = (
    "auth: {issuer: https://idp.example.com, audience: https://mcp.example.com/mcp, "
    "scopes: [toolctl.call]}"
)


@dataclass(frozen=True)
class AuthSettings:
    """Whose tokens the server accepts, for which resource, needing which scopes."""

    issuer: str
    audience: str
    jwks_uri: str | None = None
    scopes: tuple[str, ...] = ()


def is_loopback_url(url: str) -> bool:
    """True for an ``http://`` URL on 127.0.0.0/8, ``::1`` or ``localhost`` (tests, a local
    authorization server): the one place plain HTTP is allowed."""
    import ipaddress

    host = urlsplit(url).hostname or ""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(value: Any, what: str, where: str) -> str:
    """``value`` as an absolute https URL (http only on loopback), else :class:`ConfigError`."""
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where}: {what} must be a URL, not {value!r}", hint=f"e.g. {_EXAMPLE}")
    parts = urlsplit(value)
    secure = parts.scheme == "https" or (parts.scheme == "http" and is_loopback_url(value))
    if not parts.hostname or not secure or parts.fragment or parts.username or parts.password:
        raise ConfigError(
            f"{where}: {what} {value!r} must be an https:// URL with a host and no fragment "
            "or credentials (http:// only on a loopback address)",
            hint="tokens and keys must not travel in clear text; e.g. https://idp.example.com",
        )
    return value


def check_scopes(value: Any, where: str, what: str = "scopes") -> tuple[str, ...]:
    """``value`` as a tuple of OAuth scope tokens (RFC 6749 §3.3), else :class:`ConfigError`."""
    if not isinstance(value, list) or not all(isinstance(s, str) for s in value):
        raise ConfigError(
            f"{where}: {what} must be a list of scope names, not {value!r}",
            hint="e.g. scopes: [toolctl.call]",
        )
    for scope in value:
        if not SCOPE_TOKEN.fullmatch(scope):
            raise ConfigError(
                f"{where}: {what}: {scope!r} is not an OAuth scope (no spaces, quotes or "
                "backslashes; printable ASCII only)",
                hint="e.g. scopes: [toolctl.call, files:write]",
            )
    return tuple(dict.fromkeys(value))


def auth_settings(
    settings: Mapping[str, Any],
    where: Callable[[], str],
    *,
    issuer: str | None = None,
    audience: str | None = None,
    jwks_uri: str | None = None,
) -> AuthSettings | None:
    """The ``auth:`` section of ``settings`` with the command line's values on top (None when
    neither sets an issuer). ``where()`` names the section's file:line:col for an error.

    Raises :class:`ConfigError` naming what is wrong and how to fix it.
    """
    section = settings.get("auth")
    if section is not None and not isinstance(section, dict):
        raise ConfigError(f"{where()}: 'auth' must be a mapping", hint=f"e.g. {_EXAMPLE}")
    section = dict(section or {})
    unknown = [k for k in section if k not in KEYS and not str(k).startswith("x-")]
    if unknown:
        raise ConfigError(
            f"{where()}: unknown auth setting(s) {', '.join(map(str, unknown))}",
            hint=f"known auth settings: {', '.join(KEYS)}",
        )
    for key, given in (("issuer", issuer), ("audience", audience), ("jwksUri", jwks_uri)):
        if given is not None:
            section[key] = given
    if not section.get("issuer") and not section.get("audience"):
        if section.get("jwksUri") or section.get("scopes"):
            raise ConfigError(
                f"{where()}: auth needs an issuer and an audience",
                hint=f"e.g. {_EXAMPLE}",
            )
        return None
    for key in ("issuer", "audience"):
        if not section.get(key):
            raise ConfigError(
                f"{where()}: auth.{key} is missing (or --auth-{key})", hint=f"e.g. {_EXAMPLE}"
            )
    jwks = section.get("jwksUri")
    return AuthSettings(
        issuer=check_url(section["issuer"], "auth.issuer", where()),
        audience=check_url(section["audience"], "auth.audience", where()),
        jwks_uri=None if jwks is None else check_url(jwks, "auth.jwksUri", where()),
        scopes=check_scopes(section.get("scopes", []), where(), "auth.scopes"),
    )
