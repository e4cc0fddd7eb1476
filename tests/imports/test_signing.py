"""Signed locks: ``lock --sign`` writes a DSSE envelope over an in-toto Statement v1 that the
reference libraries (securesystemslib, in-toto) verify; ``lock --check``, ``export`` and
``serve`` with ``--locked --verify-key`` refuse a missing, tampered or wrongly signed lock."""

from __future__ import annotations

import base64
import copy
import hashlib
import json
from pathlib import Path

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives.serialization import (
    Encoding,
    NoEncryption,
    PrivateFormat,
    PublicFormat,
)

from tests.cli_helpers import Capture, toolctl

TOOL = """\
toolctl: 1
name: greet
title: Greet
description: Greets the person named in the input, politely.
inputSchema:
  type: object
  properties:
    name: {type: string, description: Who to greet.}
  required: [name]
  additionalProperties: false
"""


def _keypair(directory: Path, stem: str) -> tuple[Path, Path]:
    key = Ed25519PrivateKey.generate()
    private = directory / f"{stem}.pem"
    public = directory / f"{stem}.pub.pem"
    private.write_bytes(key.private_bytes(Encoding.PEM, PrivateFormat.PKCS8, NoEncryption()))
    public.write_bytes(
        key.public_key().public_bytes(Encoding.PEM, PublicFormat.SubjectPublicKeyInfo)
    )
    return private, public


@pytest.fixture
def signed(project: Path, capsys: Capture) -> tuple[Path, Path]:
    """A project whose lock is signed; (its public key, another key's public key)."""
    (project / "tools.d" / "greet.yaml").write_text(TOOL)
    private, public = _keypair(project, "lock-key")
    _, other = _keypair(project, "other-key")
    code, _, err = toolctl(capsys, "lock", "--sign", str(private))
    assert code == 0, err
    assert "signed: toolctl.lock.sig" in err
    return public, other


def test_the_envelope_verifies_with_the_reference_libraries(
    project: Path, signed: tuple[Path, Path]
) -> None:
    from cryptography.hazmat.primitives.serialization import load_pem_public_key
    from in_toto.models.metadata import Envelope as InTotoEnvelope
    from in_toto.models.metadata import Metadata
    from securesystemslib.dsse import Envelope
    from securesystemslib.exceptions import VerificationError
    from securesystemslib.signer import SSlibKey

    public, other = signed
    data = json.loads((project / "toolctl.lock.sig").read_text())
    key = SSlibKey.from_crypto(load_pem_public_key(public.read_bytes()))  # type: ignore[arg-type]
    envelope = Envelope.from_dict(copy.deepcopy(data))  # from_dict consumes its input
    assert envelope.payload_type == "application/vnd.in-toto+json"
    assert set(envelope.verify([key], 1)) == {key.keyid}  # our key id is securesystemslib's
    statement = json.loads(envelope.payload)
    assert statement["_type"] == "https://in-toto.io/Statement/v1"
    lock = (project / "toolctl.lock").read_bytes()
    assert statement["subject"] == [
        {"name": "toolctl.lock", "digest": {"sha256": hashlib.sha256(lock).hexdigest()}}
    ]
    # in-toto reads the same file as its own DSSE metadata and verifies the signature
    loaded = Metadata.load(str(project / "toolctl.lock.sig"))
    assert isinstance(loaded, InTotoEnvelope)
    loaded.verify_signature({"keyid": key.keyid, **key.to_dict()})
    wrong = SSlibKey.from_crypto(load_pem_public_key(other.read_bytes()))  # type: ignore[arg-type]
    with pytest.raises(VerificationError):
        Envelope.from_dict(copy.deepcopy(data)).verify([wrong], 1)
    forged = dict(
        copy.deepcopy(data),
        payload=base64.b64encode(envelope.payload.replace(b"lock", b"lokc")).decode(),
    )
    with pytest.raises(VerificationError):
        Envelope.from_dict(forged).verify([key], 1)


def test_lock_check_verifies_the_signature(
    project: Path, signed: tuple[Path, Path], capsys: Capture
) -> None:
    public, other = signed
    code, _, err = toolctl(capsys, "lock", "--check", "--verify-key", str(public))
    assert code == 0 and "(signature verified)" in err
    code, _, err = toolctl(capsys, "lock", "--check", "--verify-key", str(other))
    assert code == 1 and "no valid signature by the key" in err


def test_a_tampered_lock_is_refused_everywhere(
    project: Path, signed: tuple[Path, Path], capsys: Capture
) -> None:
    public, _ = signed
    lock = project / "toolctl.lock"
    lock.write_text(lock.read_text().replace("Greets the person", "Greets the persons"))
    for argv in (
        ["lock", "--check", "--verify-key", str(public)],
        ["export", "openai", "--locked", "--verify-key", str(public)],
        ["run", "greet", "-i", '{"name": "x"}', "--locked", "--verify-key", str(public)],
    ):
        code, out, err = toolctl(capsys, *argv)
        assert code == 1, argv
        assert "toolctl.lock is not the file that was signed" in err and out == ""


def test_a_missing_or_unreadable_signature_is_refused(
    project: Path, signed: tuple[Path, Path], capsys: Capture
) -> None:
    public, _ = signed
    sig = project / "toolctl.lock.sig"
    sig.write_text("{not json")
    code, _, err = toolctl(capsys, "export", "openai", "--locked", "--verify-key", str(public))
    assert code == 1 and "not a readable DSSE envelope" in err
    sig.unlink()
    code, _, err = toolctl(capsys, "export", "openai", "--locked", "--verify-key", str(public))
    assert code == 1 and "toolctl.lock.sig is missing: toolctl.lock is not signed" in err


def test_key_mistakes_are_usage_errors(
    project: Path, signed: tuple[Path, Path], capsys: Capture
) -> None:
    public, _ = signed
    code, _, err = toolctl(capsys, "lock", "--sign", str(public))  # a public key to sign with
    assert code == 2 and "not an unencrypted PEM private key" in err
    code, _, err = toolctl(capsys, "export", "openai", "--verify-key", str(public))
    assert code == 2 and "give --locked with it" in err
    code, _, err = toolctl(capsys, "lock", "--check", "--verify-key", str(project / "nope.pem"))
    assert code == 2 and "cannot read the key" in err


def test_serve_refuses_a_lock_signed_by_another_key(
    project: Path, signed: tuple[Path, Path]
) -> None:
    from tests.foundation.conftest import run_toolctl

    _, other = signed
    done = run_toolctl("serve", "--locked", "--verify-key", str(other), cwd=project)
    assert done.returncode == 1
    assert "toolctl.lock.sig has no valid signature by the key" in done.stderr
