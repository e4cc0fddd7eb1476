"""An authorization server in miniature for the identity tests: signing keys, a JWKS, tokens.

:class:`Issuer` signs JWT access tokens (RFC 9068) with its own keys and serves its JWKS and
discovery metadata through a fake ``fetch`` (in process) or a real loopback HTTP server
(:func:`serve_issuer`, for tests that start ``toolctl serve``).
"""

from __future__ import annotations

import contextlib
import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import ec, rsa

AUDIENCE = "https://mcp.example.com/mcp"
ISSUER = "https://idp.example.com"


def ec_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def rsa_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def public_jwk(key: Any, kid: str, alg: str | None = None) -> dict[str, Any]:
    algorithm = (
        jwt.algorithms.ECAlgorithm
        if isinstance(key, ec.EllipticCurvePrivateKey)
        else (jwt.algorithms.RSAAlgorithm)
    )
    data: dict[str, Any] = json.loads(algorithm.to_jwk(key.public_key()))
    data.update(kid=kid, use="sig")
    if alg:
        data["alg"] = alg
    return data


@dataclass
class Issuer:
    """Keys by kid (the first signs), the JWKS they make, and the documents it serves."""

    issuer: str = ISSUER
    audience: str = AUDIENCE
    keys: dict[str, Any] = field(default_factory=lambda: {"k1": ec_key()})
    fetched: list[str] = field(default_factory=list)
    down: bool = False
    metadata: bool = True

    @property
    def kid(self) -> str:
        return next(iter(self.keys))

    def jwks(self) -> dict[str, Any]:
        return {"keys": [public_jwk(k, kid) for kid, k in self.keys.items()]}

    def rotate(self, kid: str) -> None:
        """A new signing key, first; the old ones stay published."""
        self.keys = {kid: ec_key(), **self.keys}

    def token(
        self,
        sub: str = "alice",
        scope: str = "toolctl.call",
        *,
        key: Any = None,
        kid: str | None = None,
        alg: str | None = None,
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload = {
            "iss": self.issuer,
            "aud": self.audience,
            "sub": sub,
            "iat": now,
            "exp": now + 600,
            "scope": scope,
            "client_id": "app",
            **claims,
        }
        payload = {k: v for k, v in payload.items() if v is not None}
        kid = kid or self.kid
        signer = key if key is not None else self.keys[kid]
        if alg is None:
            alg = "ES256" if isinstance(signer, ec.EllipticCurvePrivateKey) else "RS256"
        headers = {"kid": kid, "typ": "at+jwt"}
        return jwt.encode(payload, signer, algorithm=alg, headers=headers)

    def document(self, url: str) -> tuple[int, dict[str, str], bytes]:
        """What this issuer answers at ``url`` (a path of its origin)."""
        self.fetched.append(url)
        if self.down:
            raise ConnectionError("connection refused")
        path = url.split("://", 1)[1].split("/", 1)[1] if "/" in url.split("://", 1)[1] else ""
        if path == "jwks":
            return 200, {"cache-control": "max-age=600"}, json.dumps(self.jwks()).encode()
        if self.metadata and path == ".well-known/openid-configuration":
            meta = {"issuer": self.issuer, "jwks_uri": f"{self.issuer}/jwks"}
            return 200, {}, json.dumps(meta).encode()
        return 404, {}, b"{}"

    async def fetch(self, url: str) -> tuple[int, dict[str, str], bytes]:
        return self.document(url)


@contextlib.contextmanager
def serve_issuer(issuer: Issuer) -> Iterator[str]:
    """Serve ``issuer``'s documents on a free loopback port; yields its base URL (which
    becomes its ``issuer``)."""

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            try:
                status, headers, body = issuer.document(f"{issuer.issuer}{self.path}")
            except ConnectionError:
                self.send_response(503)
                self.end_headers()
                return
            self.send_response(status)
            for name, value in {"content-type": "application/json", **headers}.items():
                self.send_header(name, value)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    issuer.issuer = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield issuer.issuer
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)
