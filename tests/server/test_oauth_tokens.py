"""JWT access tokens: what the resource server accepts and refuses (issue 22).

In process: the issuer's keys come through a fake fetch, so each hostile token is checked
against a real signature check with no network.
"""

from __future__ import annotations

import base64
import json
import time

import anyio
import jwt
import pytest
from cryptography.hazmat.primitives import serialization

from tests.server.oauth_helpers import AUDIENCE, ISSUER, Issuer, ec_key, rsa_key
from toolctl.authconfig import AuthSettings
from toolctl.principal import Principal
from toolctl.server import jwks
from toolctl.server.jwks import KeySet, KeysUnavailable
from toolctl.server.tokens import InvalidToken, TokenVerifier


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _verifier(
    issuer: Issuer, clock: Clock | None = None, *, jwks_uri: str | None = None
) -> TokenVerifier:
    settings = AuthSettings(issuer.issuer, issuer.audience, jwks_uri)
    return TokenVerifier(KeySet(settings, fetch=issuer.fetch, clock=clock or Clock()))


def _verify(verifier: TokenVerifier, token: str) -> Principal:
    return anyio.run(verifier.verify, token)


def _refused(verifier: TokenVerifier, token: str, why: str) -> None:
    with pytest.raises(InvalidToken, match=why):
        _verify(verifier, token)


def test_a_valid_token_names_its_principal_and_scopes() -> None:
    issuer = Issuer()
    principal = _verify(_verifier(issuer), issuer.token("alice", "toolctl.call files:read"))
    assert principal == Principal(ISSUER, "alice", "app", frozenset({"toolctl.call", "files:read"}))


def test_an_rsa_key_and_a_pinned_algorithm_work() -> None:
    issuer = Issuer(keys={"r1": rsa_key()})
    assert _verify(_verifier(issuer), issuer.token("bob")).subject == "bob"
    # PS256 with the same RSA key (the JWK pins no algorithm): an RSA algorithm, accepted
    assert _verify(_verifier(issuer), issuer.token("bob", alg="PS256")).subject == "bob"


@pytest.mark.parametrize(
    ("claims", "why"),
    [
        ({"aud": "https://other.example.com/mcp"}, "another resource"),
        ({"iss": "https://evil.example.com"}, "another issuer"),
        ({"exp": -300}, "expired"),  # seconds from when the test runs (not collection)
        ({"nbf": 300}, "not valid yet"),
        ({"exp": None}, "'exp'"),
        ({"sub": None}, "'sub'"),
    ],
    ids=["wrong-audience", "wrong-issuer", "expired", "not-yet-valid", "no-exp", "no-sub"],
)
def test_a_token_failing_a_claim_check_is_refused(claims: dict[str, object], why: str) -> None:
    issuer = Issuer()
    now = int(time.time())
    claims = {
        k: now + v if k in ("exp", "nbf") and isinstance(v, int) else v for k, v in claims.items()
    }
    _refused(_verifier(issuer), issuer.token(**claims), why)  # type: ignore[arg-type]


def test_a_little_clock_skew_is_allowed() -> None:
    issuer = Issuer()
    token = issuer.token(exp=int(time.time()) - 5, nbf=int(time.time()) + 5)
    assert _verify(_verifier(issuer), token).subject == "alice"


def test_a_token_signed_by_another_key_under_a_known_kid_is_refused() -> None:
    issuer = Issuer()
    _refused(_verifier(issuer), issuer.token(key=ec_key(), kid="k1"), "signature")


def test_alg_none_is_refused() -> None:
    issuer = Issuer()
    good = issuer.token()
    header = base64.urlsafe_b64encode(b'{"alg":"none","kid":"k1"}').rstrip(b"=").decode()
    unsigned = f"{header}.{good.split('.')[1]}."
    _refused(_verifier(issuer), unsigned, "'none' are not accepted")


def test_hs256_signed_with_the_public_key_is_refused() -> None:
    # the classic confusion attack: the public key (which anyone may fetch) used as the
    # HMAC secret; refused by algorithm before any key is used
    issuer = Issuer(keys={"r1": rsa_key()})
    pem = (
        issuer.keys["r1"]
        .public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    )
    now = int(time.time())
    claims = {"iss": ISSUER, "aud": AUDIENCE, "sub": "mallory", "exp": now + 60}
    forged = _hs256(claims, pem, "r1")
    _refused(_verifier(issuer), forged, "'HS256' are not accepted")


def _hs256(claims: dict[str, object], secret: bytes, kid: str) -> str:
    import hashlib
    import hmac

    def part(data: dict[str, object]) -> str:
        return base64.urlsafe_b64encode(json.dumps(data).encode()).rstrip(b"=").decode()

    signing = f"{part({'alg': 'HS256', 'kid': kid})}.{part(claims)}"
    mac = hmac.new(secret, signing.encode(), hashlib.sha256).digest()
    return f"{signing}.{base64.urlsafe_b64encode(mac).rstrip(b'=').decode()}"


def test_a_shared_secret_in_the_jwks_is_never_a_token_key() -> None:
    document = {"keys": [{"kty": "oct", "k": "c2VjcmV0", "kid": "s"}]}
    assert jwks.parse_keys(document) == {}


def test_an_algorithm_the_key_is_not_for_is_refused() -> None:
    issuer = Issuer(keys={"r1": rsa_key()})
    # an EC-signed token naming the RSA key's kid: refused, whatever its signature
    _refused(_verifier(issuer), issuer.token(key=ec_key(), kid="r1", alg="ES256"), "not signed")


def test_garbage_is_not_a_jwt() -> None:
    _refused(_verifier(Issuer()), "not-a-token", "not a JWT")


def test_a_rotated_key_is_fetched_when_a_token_names_it() -> None:
    issuer, clock = Issuer(), Clock()
    verifier = _verifier(issuer, clock)
    assert _verify(verifier, issuer.token("alice")).subject == "alice"
    fetches = len(issuer.fetched)
    issuer.rotate("k2")
    clock.now += jwks.MIN_REFETCH_S  # a rotation some time later
    assert _verify(verifier, issuer.token("bob")).subject == "bob"  # signed with k2
    assert len(issuer.fetched) == fetches + 1


def test_unknown_key_ids_refetch_at_most_once_per_interval() -> None:
    issuer, clock = Issuer(), Clock()
    verifier = _verifier(issuer, clock)
    _verify(verifier, issuer.token())
    fetches = len(issuer.fetched)
    stranger = ec_key()
    for n in range(20):  # a flood of tokens naming made-up keys
        _refused(verifier, issuer.token(key=stranger, kid=f"made-up-{n}"), "not signed")
    assert len(issuer.fetched) - fetches <= 1


def test_a_cached_token_is_checked_again_after_the_keys_change() -> None:
    issuer, clock = Issuer(), Clock()
    verifier = _verifier(issuer, clock)
    token = issuer.token()
    _verify(verifier, token)
    issuer.keys = {"k9": ec_key()}  # k1 withdrawn (compromised)
    clock.now += jwks.DEFAULT_MAX_AGE_S * 20  # the cached set is stale: fetched again
    _refused(verifier, token, "not signed")


def test_an_unreachable_jwks_fails_closed_and_says_why() -> None:
    issuer = Issuer(down=True)
    verifier = _verifier(issuer, jwks_uri=f"{ISSUER}/jwks")
    with pytest.raises(KeysUnavailable, match=r"cannot reach https://idp\.example\.com/jwks"):
        _verify(verifier, issuer.token())
    with pytest.raises(KeysUnavailable) as caught:
        verifier.keys.check_ready()
    assert "cannot check access tokens" in caught.value.shown_reason


def test_keys_fetched_once_survive_an_outage() -> None:
    issuer, clock = Issuer(), Clock()
    verifier = _verifier(issuer, clock)
    _verify(verifier, issuer.token("alice"))
    issuer.down = True
    clock.now += jwks.MAX_AGE_BOUNDS[1] + 1  # stale: a refetch is tried and fails
    assert _verify(verifier, issuer.token("bob")).subject == "bob"
    verifier.keys.check_ready()  # still ready: it has keys


def test_keys_are_found_through_the_issuers_metadata() -> None:
    issuer = Issuer()
    _verify(_verifier(issuer), issuer.token())
    assert issuer.fetched == [
        f"{ISSUER}/.well-known/oauth-authorization-server",  # RFC 8414 first (404 here)
        f"{ISSUER}/.well-known/openid-configuration",
        f"{ISSUER}/jwks",
    ]


def test_metadata_of_another_issuer_is_refused() -> None:
    issuer = Issuer()
    impostor = Issuer(issuer="https://evil.example.com")

    async def fetch(url: str) -> tuple[int, dict[str, str], bytes]:
        status, headers, body = impostor.document(url.replace(ISSUER, impostor.issuer))
        return status, headers, body

    settings = AuthSettings(ISSUER, AUDIENCE)
    verifier = TokenVerifier(KeySet(settings, fetch=fetch))
    with pytest.raises(KeysUnavailable, match="not the issuer"):
        _verify(verifier, issuer.token())


def test_a_verified_token_is_remembered(monkeypatch: pytest.MonkeyPatch) -> None:
    issuer = Issuer()
    verifier = _verifier(issuer)
    token = issuer.token()
    calls = []
    real = jwt.decode
    monkeypatch.setattr(jwt, "decode", lambda *a, **k: calls.append(1) or real(*a, **k))
    for _ in range(5):
        _verify(verifier, token)
    assert len(calls) == 1


@pytest.mark.parametrize("alg", [["RS256"], {"a": 1}, 7, None, "X" * 5000])
def test_an_odd_algorithm_header_is_refused_briefly(alg: object) -> None:
    issuer = Issuer()
    good = issuer.token()
    header = base64.urlsafe_b64encode(json.dumps({"alg": alg, "kid": "k1"}).encode())
    forged = f"{header.rstrip(b'=').decode()}.{good.split('.')[1]}.{good.split('.')[2]}"
    with pytest.raises(InvalidToken) as caught:
        _verify(_verifier(issuer), forged)
    assert len(str(caught.value)) < 80  # the reason goes to the client: never an echo


def test_a_key_replaced_under_the_same_id_is_fetched_again() -> None:
    # an authorization server restarted with new keys under the old ids
    issuer, clock = Issuer(), Clock()
    verifier = _verifier(issuer, clock)
    _verify(verifier, issuer.token("alice"))
    issuer.keys = {"k1": ec_key()}
    clock.now += jwks.MIN_REFETCH_S
    assert _verify(verifier, issuer.token("bob")).subject == "bob"


def test_a_rotation_right_after_a_scheduled_fetch_is_followed_at_once() -> None:
    issuer, clock = Issuer(), Clock()
    verifier = _verifier(issuer, clock)
    anyio.run(verifier.keys.refresh)  # the server's start-up fetch
    issuer.rotate("k2")  # no time passes
    assert _verify(verifier, issuer.token("bob")).subject == "bob"
