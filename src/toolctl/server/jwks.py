"""The authorization server's signing keys (its JWKS), fetched, cached and rotated.

The one network access of the server: to the configured ``auth.jwksUri``, or to the issuer's
RFC 8414 / OpenID Connect discovery metadata that names it (the metadata must name the same
issuer). Keys are refreshed after ``max-age`` (bounded), and at once when a token names a key
id the set lacks (a rotation), at most once per :data:`MIN_REFETCH_S` so a flood of tokens with
made-up key ids cannot turn the server into a load generator against its authorization server.

Only asymmetric signing keys are kept: an ``oct`` (shared secret) key in the set is ignored, so
no token can be checked with HMAC. Until keys were fetched once the server refuses every token
(fails closed) and :meth:`KeySet.check_ready` says why (``/readyz``).
"""

from __future__ import annotations

import json
import logging
import re
import time
import urllib.error
import urllib.request
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import anyio

from toolctl.authconfig import AuthSettings, check_url
from toolctl.errors import ToolctlError

log = logging.getLogger("toolctl.server.auth")

MIN_REFETCH_S = 30.0  # an unknown kid refetches the set at most this often
DEFAULT_MAX_AGE_S = 300.0
MAX_AGE_BOUNDS = (60.0, 3600.0)
FETCH_TIMEOUT_S = 5.0
MAX_DOCUMENT_BYTES = 512 * 1024
# The asymmetric algorithms accepted, by the key type that signs with them.
ALGORITHMS: dict[str, frozenset[str]] = {
    "RSA": frozenset({"RS256", "RS384", "RS512", "PS256", "PS384", "PS512"}),
    "EC": frozenset({"ES256", "ES384", "ES512"}),
    "OKP": frozenset({"EdDSA"}),
}
ASYMMETRIC = frozenset().union(*ALGORITHMS.values())

# GET url -> (status, headers, body); replaced in tests.
Fetch = Callable[[str], Awaitable[tuple[int, dict[str, str], bytes]]]


class KeysUnavailable(ToolctlError):
    """The authorization server's keys could not be fetched (the server refuses tokens)."""

    @property
    def shown_reason(self) -> str:
        """What ``/readyz`` says (no secret in it: the issuer's public URLs at most)."""
        return f"cannot check access tokens: {self.message}"


async def http_get(url: str) -> tuple[int, dict[str, str], bytes]:
    """GET ``url`` (no redirects, bounded time and size), on a worker thread: the standard
    library's client, as fetches are rare (start-up, expiry, rotation)."""
    return await anyio.to_thread.run_sync(_get_blocking, url)


class _NoRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: Any, **kwargs: Any) -> None:
        return None  # a redirect is answered as it is (a status that is not 200)


def _get_blocking(url: str) -> tuple[int, dict[str, str], bytes]:
    opener = urllib.request.build_opener(_NoRedirects)
    request = urllib.request.Request(url, headers={"accept": "application/json"})
    try:
        with opener.open(request, timeout=FETCH_TIMEOUT_S) as response:
            body = response.read(MAX_DOCUMENT_BYTES + 1)
            status, headers = response.status, dict(response.headers.items())
    except urllib.error.HTTPError as exc:
        return exc.code, {}, b""
    if len(body) > MAX_DOCUMENT_BYTES:
        raise KeysUnavailable(f"{url} answered more than {MAX_DOCUMENT_BYTES} bytes")
    return status, {k.lower(): v for k, v in headers.items()}, body


def discovery_urls(issuer: str) -> list[str]:
    """Where the issuer's metadata may be: RFC 8414 (path inserted after the well-known
    prefix), then OpenID Connect Discovery (path appended), as the MCP authorization spec
    tries them."""
    parts = urlsplit(issuer)
    path = parts.path.rstrip("/")
    oauth = urlunsplit(
        (parts.scheme, parts.netloc, f"/.well-known/oauth-authorization-server{path}", "", "")
    )
    oidc = urlunsplit(
        (parts.scheme, parts.netloc, f"{path}/.well-known/openid-configuration", "", "")
    )
    return [oauth, oidc]


def _max_age(headers: dict[str, str]) -> float:
    found = re.search(r"max-age=(\d+)", headers.get("cache-control", ""))
    age = float(found.group(1)) if found else DEFAULT_MAX_AGE_S
    return min(max(age, MAX_AGE_BOUNDS[0]), MAX_AGE_BOUNDS[1])


@dataclass(frozen=True)
class SigningKey:
    """One public key of the set: its type, the algorithm it is pinned to (if any), the key."""

    kty: str
    alg: str | None
    key: Any = field(compare=False)  # a cryptography public key
    jwk: str = ""  # the published JWK (canonical JSON): what tells one key from another

    def allows(self, alg: str) -> bool:
        """Whether a token signed with ``alg`` may be checked with this key."""
        return alg in ALGORITHMS[self.kty] and (self.alg is None or self.alg == alg)


def parse_keys(document: Any) -> dict[str, SigningKey]:
    """Key id to :class:`SigningKey` of every usable asymmetric signing key in a JWKS document
    (a key without ``kid`` is kept under ``""``)."""
    import jwt

    if not isinstance(document, dict) or not isinstance(document.get("keys"), list):
        raise KeysUnavailable("the JWKS is not a JSON object with a 'keys' list")
    keys: dict[str, SigningKey] = {}
    for entry in document["keys"]:
        if not isinstance(entry, dict) or entry.get("kty") not in ALGORITHMS:
            continue  # oct (a shared secret) and unknown types: never a token's key
        if entry.get("use", "sig") != "sig" or ("d" in entry):  # a private key: not published
            continue
        alg = entry.get("alg")
        if alg is not None and alg not in ALGORITHMS[entry["kty"]]:
            continue
        try:
            key = jwt.PyJWK(entry).key
        except (jwt.PyJWKError, jwt.InvalidKeyError, ValueError, TypeError):
            log.warning("ignoring a key of the JWKS that cannot be read (kid %r)", entry.get("kid"))
            continue
        shown = json.dumps(entry, sort_keys=True)
        keys[str(entry.get("kid", ""))] = SigningKey(entry["kty"], alg, key, shown)
    return keys


class KeySet:
    """The signing keys of one issuer, fetched on first use and kept fresh."""

    def __init__(
        self,
        settings: AuthSettings,
        *,
        fetch: Fetch | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.settings = settings
        self._fetch = fetch or http_get
        self._clock = clock
        self._keys: dict[str, SigningKey] = {}
        self._fresh_until = 0.0
        self._last_try = -MIN_REFETCH_S
        self._last_forced = -MIN_REFETCH_S
        self._jwks_uri = settings.jwks_uri
        self._lock = anyio.Lock()
        self.error: str | None = None  # why the last fetch failed (None: it worked)
        self.version = 0  # bumped whenever the set of keys changes

    @property
    def loaded(self) -> bool:
        """Whether keys were fetched at least once."""
        return bool(self._keys)

    @property
    def stale(self) -> bool:
        """Whether the keys are due for a refetch (their ``max-age`` is over)."""
        return self._clock() >= self._fresh_until

    @property
    def refreshing(self) -> bool:
        """Whether a fetch is under way."""
        return self._lock.locked()

    def check_ready(self) -> None:
        """Raise :class:`KeysUnavailable` saying why tokens cannot be checked right now."""
        if not self._keys:
            raise KeysUnavailable(
                self.error or "the authorization server's keys were not fetched yet"
            )

    async def keep_fresh(self) -> None:
        """Fetch the keys now, and again whenever they are stale or missing (runs while the
        server serves, so that ``/readyz`` reflects whether tokens can be checked)."""
        while True:
            if not self._keys or self._clock() >= self._fresh_until:
                await self.refresh()
            await anyio.sleep(MIN_REFETCH_S if not self._keys else 5.0)

    async def key(self, kid: str | None) -> SigningKey | None:
        """The key ``kid``, refetching the set when it is stale or lacks ``kid``;
        None when no such key exists. Raises :class:`KeysUnavailable` when no key was ever
        fetched."""
        if not self._keys or self.stale:
            await self.refresh()
        elif self._find(kid) is None:  # a rotation, or a made-up id: look, not too often
            await self.refresh(forced=True)
        if not self._keys:
            self.check_ready()
        return self._find(kid)

    def _find(self, kid: str | None) -> SigningKey | None:
        if kid is None:
            return next(iter(self._keys.values())) if len(self._keys) == 1 else None
        return self._keys.get(kid)

    async def refresh(self, *, forced: bool = False) -> None:
        """Fetch the set again, unless another fetch ran less than :data:`MIN_REFETCH_S` ago
        (keys are kept when a fetch fails: an outage of the authorization server does not
        lock everyone out at once). ``forced`` (a token names a key the set lacks) is limited
        on its own: the scheduled fetches do not delay following a rotation."""
        async with self._lock:
            now = self._clock()
            last = self._last_forced if forced else self._last_try
            if now - last < MIN_REFETCH_S:
                return
            if forced:
                self._last_forced = now
            self._last_try = now
            try:
                keys, max_age = await self._download()
            except KeysUnavailable as exc:
                self.error = exc.message
                log.warning("cannot fetch the authorization server's keys: %s", exc.message)
                return
            self.error = None
            if keys != self._keys:  # ids or key material changed
                self.version += 1
            self._keys = keys
            self._fresh_until = self._clock() + max_age

    async def _download(self) -> tuple[dict[str, SigningKey], float]:
        uri = self._jwks_uri or await self._discover()
        status, headers, body = await self._get(uri)
        if status != 200:
            raise KeysUnavailable(f"the JWKS at {uri} answered HTTP {status}")
        keys = parse_keys(_json(body, uri))
        if not keys:
            raise KeysUnavailable(f"the JWKS at {uri} has no asymmetric signing key")
        return keys, _max_age(headers)

    async def _discover(self) -> str:
        issuer = self.settings.issuer
        for url in discovery_urls(issuer):
            status, _, body = await self._get(url)
            if status != 200:
                continue
            metadata = _json(body, url)
            if not isinstance(metadata, dict) or metadata.get("issuer") != issuer:
                raise KeysUnavailable(f"the metadata at {url} is not the issuer {issuer}'s")
            try:
                uri = check_url(metadata.get("jwks_uri"), "jwks_uri", url)
            except ToolctlError as exc:
                raise KeysUnavailable(exc.message) from None
            self._jwks_uri = uri
            return uri
        raise KeysUnavailable(
            f"the issuer {issuer} publishes no authorization server metadata "
            "(/.well-known/oauth-authorization-server or openid-configuration); set auth.jwksUri"
        )

    async def _get(self, url: str) -> tuple[int, dict[str, str], bytes]:
        try:
            return await self._fetch(url)
        except KeysUnavailable:
            raise
        except Exception as exc:  # any network failure: the keys are unavailable, say why
            raise KeysUnavailable(f"cannot reach {url}: {type(exc).__name__}: {exc}") from None


def _json(body: bytes, url: str) -> Any:
    try:
        return json.loads(body)
    except ValueError:
        raise KeysUnavailable(f"{url} did not answer JSON") from None
