"""Signed locks: ``toolctl.lock.sig``, a DSSE envelope over an in-toto Statement v1.

The statement's subject is the lock file (its sha256); the envelope's payloadType is
``application/vnd.in-toto+json`` and its one signature is Ed25519 over DSSE's pre-authentication
encoding. The key id is the one securesystemslib derives from the public key, so the envelope
verifies with the in-toto and securesystemslib reference libraries as well as here.
:func:`verify` refuses (``LockError``) a missing signature file, a lock whose digest is not the
signed one, a signature that does not verify, and another key.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from toolctl.errors import LockError, UsageError

PAYLOAD_TYPE = "application/vnd.in-toto+json"
STATEMENT_TYPE = "https://in-toto.io/Statement/v1"
PREDICATE_TYPE = "https://toolctl.dev/lock/v1"
SIG_SUFFIX = ".sig"
MAX_SIG_BYTES = 1024 * 1024


def signature_path(lock: Path) -> Path:
    """Where the signature of ``lock`` lives: ``toolctl.lock.sig`` beside it."""
    return lock.with_name(lock.name + SIG_SUFFIX)


def pae(payload_type: str, payload: bytes) -> bytes:
    """DSSE v1 pre-authentication encoding: what is signed."""
    kind = payload_type.encode()
    return b"DSSEv1 %d %s %d %s" % (len(kind), kind, len(payload), payload)


def _crypto() -> None:
    try:
        import cryptography  # noqa: F401
    except ImportError:  # pragma: no cover - installed with the `sign` extra
        from toolctl.install import install_hint

        raise UsageError(
            "signed locks need the cryptography package", hint=install_hint("sign")
        ) from None


def _load_private(path: Path) -> Any:
    _crypto()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
    from cryptography.hazmat.primitives.serialization import load_pem_private_key

    return _load_key(
        path,
        lambda data: load_pem_private_key(data, password=None),
        Ed25519PrivateKey,
        "an unencrypted PEM private key",
        "make one with: openssl genpkey -algorithm ed25519 -out lock-key.pem",
    )


def _load_public(path: Path) -> Any:
    _crypto()
    from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    return _load_key(
        path,
        load_pem_public_key,
        Ed25519PublicKey,
        "a PEM public key",
        "export it with: openssl pkey -in lock-key.pem -pubout -out lock-key.pub.pem",
    )


def _load_key(path: Path, load: Callable[[bytes], Any], kind: type, what: str, hint: str) -> Any:
    """The Ed25519 key in the PEM file ``path`` (``load`` parses it); a :class:`UsageError`
    saying what the file is not, and how to make the right one, otherwise."""
    data = _read_key(path)
    try:
        key = load(data)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"{path}: not {what} ({exc})", hint=hint) from None
    if not isinstance(key, kind):
        raise UsageError(f"{path}: the key is not Ed25519", hint="lock signatures use Ed25519")
    return key


def _read_key(path: Path) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read(64 * 1024)
    except OSError as exc:
        raise UsageError(f"cannot read the key {path}: {exc.strerror or exc}") from None


def key_id(public_key: Any) -> str:
    """securesystemslib's key id of an Ed25519 public key: the sha256 of its canonical key
    metadata (keytype, scheme, hex public key)."""
    from cryptography.hazmat.primitives.serialization import Encoding, PublicFormat

    raw = public_key.public_bytes(Encoding.Raw, PublicFormat.Raw)
    meta = {"keytype": "ed25519", "keyval": {"public": raw.hex()}, "scheme": "ed25519"}
    blob = json.dumps(meta, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode()).hexdigest()


def statement(lock: Path, data: bytes) -> dict[str, Any]:
    """The in-toto Statement v1 naming the lock file (by name and sha256) as its subject."""
    return {
        "_type": STATEMENT_TYPE,
        "subject": [{"name": lock.name, "digest": {"sha256": hashlib.sha256(data).hexdigest()}}],
        "predicateType": PREDICATE_TYPE,
        "predicate": {"lockFile": lock.name},
    }


def sign(lock: Path, key_file: Path) -> Path:
    """Write ``toolctl.lock.sig`` for ``lock`` with the Ed25519 private key in ``key_file``."""
    from toolctl.atomicfile import replace

    key = _load_private(key_file)
    data = _read_lock(lock)
    payload = json.dumps(statement(lock, data), sort_keys=True, separators=(",", ":")).encode()
    signature = key.sign(pae(PAYLOAD_TYPE, payload))
    envelope = {
        "payload": base64.b64encode(payload).decode(),
        "payloadType": PAYLOAD_TYPE,
        "signatures": [
            {"keyid": key_id(key.public_key()), "sig": base64.b64encode(signature).decode()}
        ],
    }
    target = signature_path(lock)
    replace(target, (json.dumps(envelope, indent=2) + "\n").encode())
    return target


def _read_lock(lock: Path) -> bytes:
    try:
        return lock.read_bytes()
    except OSError as exc:
        raise LockError(
            f"cannot read {lock}: {exc.strerror or exc}", hint="write it with `toolctl lock`"
        ) from None


def verify(lock: Path, public_key_file: Path) -> None:
    """Check ``toolctl.lock.sig`` against ``lock`` and the key; :class:`LockError` if not."""
    key = _load_public(public_key_file)
    sig_file = signature_path(lock)
    fix = "sign the reviewed lock with `toolctl lock --sign KEY.pem`"
    if not sig_file.is_file():
        raise LockError(f"{sig_file.name} is missing: {lock.name} is not signed", hint=fix)
    envelope = _read_envelope(sig_file)
    payload = _payload(envelope, sig_file)
    wanted = key_id(key)
    ok = False
    for entry in envelope.get("signatures", []):
        if not isinstance(entry, dict) or entry.get("keyid") != wanted:
            continue
        try:
            key.verify(
                base64.b64decode(str(entry.get("sig")), validate=True), pae(PAYLOAD_TYPE, payload)
            )
            ok = True
        except Exception:
            continue
    if not ok:
        raise LockError(
            f"{sig_file.name} has no valid signature by the key {public_key_file} "
            f"(key id {wanted[:16]}...): signed by another key, or tampered with",
            hint=fix,
        )
    _check_subject(payload, lock, sig_file)


def _read_envelope(sig_file: Path) -> dict[str, Any]:
    try:
        with open(sig_file, "rb") as fh:
            data = json.loads(fh.read(MAX_SIG_BYTES))
    except (OSError, ValueError) as exc:
        raise LockError(f"{sig_file.name} is not a readable DSSE envelope: {exc}") from None
    if not isinstance(data, dict) or data.get("payloadType") != PAYLOAD_TYPE:
        raise LockError(f"{sig_file.name} is not a DSSE envelope of an in-toto statement")
    return data


def _payload(envelope: dict[str, Any], sig_file: Path) -> bytes:
    try:
        return base64.b64decode(str(envelope.get("payload")), validate=True)
    except ValueError:
        raise LockError(f"{sig_file.name}: the payload is not base64") from None


def _check_subject(payload: bytes, lock: Path, sig_file: Path) -> None:
    try:
        stmt = json.loads(payload)
        digest = stmt["subject"][0]["digest"]["sha256"]
        assert stmt["_type"] == STATEMENT_TYPE
    except (ValueError, KeyError, IndexError, TypeError, AssertionError):
        raise LockError(f"{sig_file.name}: the payload is not an in-toto Statement v1") from None
    actual = hashlib.sha256(_read_lock(lock)).hexdigest()
    if digest != actual:
        raise LockError(
            f"{lock.name} is not the file that was signed (sha256 {actual[:16]}..., signed "
            f"{str(digest)[:16]}...): it changed after signing",
            hint="review the change, then sign again with `toolctl lock --sign KEY.pem`",
        )
