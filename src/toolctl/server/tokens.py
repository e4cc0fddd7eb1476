"""JWT access tokens (RFC 9068) checked against the authorization server's keys.

A token is accepted when its signature verifies with a key of the issuer's JWKS under an
asymmetric algorithm that key allows (never ``none``, never HMAC: an HS256 token "signed" with
the public key is refused before any key is used), its ``iss`` is the configured issuer, its
``aud`` names this server's resource, it has not expired (``exp`` is required) and is valid
already (``nbf``), both with :data:`LEEWAY_S` of clock skew, and it names a subject (``sub``).

Checked tokens are remembered until they expire (up to :data:`CACHE_SIZE` of them, forgotten
when the key set changes): a client sends the same token on every request, and the signature
check is the one costly step of a call's authentication.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from toolctl.principal import Principal
from toolctl.server.jwks import ASYMMETRIC, KeySet, KeysUnavailable, SigningKey

LEEWAY_S = 30.0
CACHE_SIZE = 4096
MAX_TOKEN_BYTES = 16 * 1024

__all__ = ["InvalidToken", "KeysUnavailable", "TokenVerifier"]


class InvalidToken(Exception):
    """The token is missing, malformed, or fails a check (the message says which, briefly:
    it goes to the client in ``error_description``)."""


class TokenVerifier:
    """Checks bearer tokens for one :class:`~toolctl.authconfig.AuthSettings`."""

    def __init__(self, keys: KeySet, *, clock: Callable[[], float] = time.time) -> None:
        self.keys = keys
        self.settings = keys.settings
        self._clock = clock
        self._cache: dict[str, tuple[Principal, float, float]] = {}
        self._cache_version = keys.version

    async def verify(self, token: str) -> Principal:
        """The principal ``token`` proves; :class:`InvalidToken` when it proves none, and
        :class:`KeysUnavailable` when no key could be fetched to check it (fail closed)."""
        now = self._clock()
        keys = self.keys
        if keys.loaded and keys.stale and not keys.refreshing:
            await keys.refresh()  # a withdrawn key stops passing cached tokens
        self._forget_if_rotated()
        hit = self._cache.get(token)
        if hit is not None:
            principal, not_before, expires = hit
            if not_before - LEEWAY_S <= now < expires + LEEWAY_S:
                return principal
            del self._cache[token]
        principal, not_before, expires = await self._check(token, now)
        self._forget_if_rotated()  # the check may have fetched the keys
        if len(self._cache) >= CACHE_SIZE:
            self._cache.pop(next(iter(self._cache)))  # the oldest entry
        self._cache[token] = (principal, not_before, expires)
        return principal

    def _forget_if_rotated(self) -> None:
        if self._cache_version != self.keys.version:  # the keys changed: check tokens again
            self._cache.clear()
            self._cache_version = self.keys.version

    async def _check(self, token: str, now: float) -> tuple[Principal, float, float]:
        import jwt

        if len(token) > MAX_TOKEN_BYTES:
            raise InvalidToken("the token is too large")
        try:
            header = jwt.get_unverified_header(token)
        except jwt.PyJWTError:
            raise InvalidToken("the token is not a JWT") from None
        if not isinstance(header, dict):
            raise InvalidToken("the token is not a JWT")
        alg = header.get("alg")
        if not isinstance(alg, str) or alg not in ASYMMETRIC:
            named = repr(alg) if isinstance(alg, str) and len(alg) <= 16 else "that algorithm"
            raise InvalidToken(f"tokens signed with {named} are not accepted")
        kid = header.get("kid")
        if kid is not None and not isinstance(kid, str):
            raise InvalidToken("the token's key id is not a string")
        key = await self.keys.key(kid)
        if key is None or not key.allows(alg):
            raise InvalidToken("the token is not signed by a key of the authorization server")
        try:
            claims = self._decode(token, key, alg)
        except jwt.InvalidSignatureError:
            # The key behind a known id may have been replaced (an authorization server that
            # restarted with new keys): look once more, as often as an unknown id would.
            version = self.keys.version
            await self.keys.refresh(forced=True)
            fresh = await self.keys.key(kid) if self.keys.version != version else None
            if fresh is None or not fresh.allows(alg):
                raise InvalidToken("the token's signature does not verify") from None
            claims = self._decode(token, fresh, alg)
        return _principal(claims), _number(claims.get("nbf"), 0.0), _number(claims["exp"], now)

    def _decode(self, token: str, key: SigningKey, alg: str) -> dict[str, Any]:
        """The claims of ``token`` once its signature and claims check; :class:`InvalidToken`
        (``jwt.InvalidSignatureError`` for a signature that does not verify)."""
        import jwt

        try:
            claims: dict[str, Any] = jwt.decode(
                token,
                key.key,
                algorithms=[alg],
                audience=self.settings.audience,
                issuer=self.settings.issuer,
                leeway=LEEWAY_S,
                options={"require": ["exp", "iss", "aud", "sub"], "verify_iat": False},
            )
        except jwt.ExpiredSignatureError:
            raise InvalidToken("the token has expired") from None
        except jwt.ImmatureSignatureError:
            raise InvalidToken("the token is not valid yet") from None
        except jwt.InvalidAudienceError:
            raise InvalidToken("the token is for another resource (aud)") from None
        except jwt.InvalidIssuerError:
            raise InvalidToken("the token is from another issuer (iss)") from None
        except jwt.MissingRequiredClaimError as exc:
            raise InvalidToken(f"the token has no {exc.claim!r} claim") from None
        except jwt.InvalidSignatureError:
            raise
        except jwt.PyJWTError:
            raise InvalidToken("the token does not verify") from None
        return claims


def _number(value: Any, default: float) -> float:
    return (
        float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default
    )


def _principal(claims: dict[str, Any]) -> Principal:
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise InvalidToken("the token's subject (sub) is not a string")
    client = claims.get("client_id", claims.get("azp"))
    return Principal(
        issuer=str(claims["iss"]),
        subject=subject,
        client_id=client if isinstance(client, str) else None,
        scopes=_scopes(claims),
    )


def _scopes(claims: dict[str, Any]) -> frozenset[str]:
    # RFC 9068: ``scope``, space-separated; some servers send ``scp`` as a list.
    value = claims.get("scope", claims.get("scp"))
    if isinstance(value, str):
        return frozenset(value.split())
    if isinstance(value, list):
        return frozenset(s for s in value if isinstance(s, str))
    return frozenset()
