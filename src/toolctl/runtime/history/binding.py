"""The keyed MAC that binds a pending run to everything it will run with.

A run left awaiting approval (or suspended, or handed to a background worker) keeps its raw
input and request context in the state store until it continues. Whoever can write the store
could change them between the request and the approval: an unkeyed hash of the input can be
rewritten together with the input. So the row carries an HMAC-SHA256, under a secret of the
state store, over the run id, the tool, its definition digest, the input, the request context,
the approval, the timeout and the background flag; approve and resume recompute it and refuse a
row that does not match.

The secret of an SQLite history is a file beside the database (``state.db.key``, 32 random
bytes, mode 0600), not a table in it: a copy of the database (a backup, a bug report, a file
shared with a group) then carries no key, and a process that can write the database but not
read the key cannot forge a row. An in-memory store keeps its secret in memory. A PostgreSQL
history takes ``$TOOLCTL_STATE_KEY`` (:func:`configured_key`) when set, else a row of its own.
"""

from __future__ import annotations

import hashlib
import hmac
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.keyfile import KEY_BYTES, load_or_create_key
from toolctl.runtime import jsondata
from toolctl.runtime.errors import StateError, key_file_errors

if TYPE_CHECKING:
    from toolctl.principal import Principal
    from toolctl.runtime.history.records import RunRecord, RunStore

KEY_ENV = "TOOLCTL_STATE_KEY"  # a shared store's secret, in hex (see configured_key)
_WHAT = "the run history key"


def sign(store: RunStore, **bound: Any) -> str:
    """The MAC of ``bound`` (the run's fields, by name) under ``store``'s secret."""
    if bound.get("timeout") is not None:
        bound["timeout"] = float(bound["timeout"])  # stored as REAL: 10 comes back as 10.0
    text = jsondata.dumps(bound, canonical=True).encode("utf-8")
    return hmac.new(store.binding_key(), text, hashlib.sha256).hexdigest()


def sign_record(store: RunStore, rec: RunRecord) -> str:
    """The MAC a stored pending row should carry (see :func:`sign`)."""
    return sign(
        store,
        run_id=rec.run_id,
        tool=rec.tool,
        tool_digest=rec.tool_digest,
        input=rec.raw_input,
        context=rec.raw_context,
        approval=rec.approval,
        timeout=rec.timeout,
        background=rec.background,
        **origin_bound(rec.origin),
        **({} if rec.principal is None else {"principal": rec.principal}),
        **resume_bound(rec.raw_resume),
    )


def origin_bound(origin: str | None) -> dict[str, Any]:
    """The run's origin as a bound field: a row cannot be moved to another front end (made an
    MCP client's) without breaking its MAC. Left out when unknown, so pending rows written
    before origins were recorded still verify."""
    return {} if origin is None else {"origin": origin}


def resume_bound(answers: Any) -> dict[str, Any]:
    """The answers a queued background run starts with (``inputRequests``) as a bound field:
    nobody who can write the store changes what the user answered. Left out when there are
    none, so every other row's MAC stays as it was."""
    return {} if answers is None else {"resume": answers}


def public_principal(principal: Principal | None) -> dict[str, Any] | None:
    """What a run records of its principal (None: the local operator)."""
    return None if principal is None else principal.public()


def principal_bound(principal: Principal | None) -> dict[str, Any]:
    """The run's principal as a bound field: a pending row cannot be handed to another caller
    without breaking its MAC. Left out for the operator's runs (and older rows)."""
    return {} if principal is None else {"principal": principal.public()}


def verify(store: RunStore, rec: RunRecord) -> bool:
    """True when ``rec``'s pending data is what was stored with it."""
    if not rec.binding:
        return False
    return hmac.compare_digest(rec.binding, sign_record(store, rec))


def configured_key() -> bytes | None:
    """The secret given in ``$TOOLCTL_STATE_KEY`` (at least 32 hex digits), or None when it is
    not set. Raises :class:`StateError` for a value that is not a usable key."""
    configured = os.environ.get(KEY_ENV)
    if not configured:
        return None
    try:
        key = bytes.fromhex(configured)
    except ValueError:
        key = b""
    if len(key) < KEY_BYTES // 2:
        raise StateError(f"{KEY_ENV} is not a usable key", hint="give at least 32 hex digits")
    return key


def key_path(db: Path) -> Path:
    """Where the secret of the history at ``db`` is kept."""
    return db.with_name(db.name + ".key")


def load_key(path: Path) -> bytes:
    """The secret at ``path``, created (mode 0600) when missing; see :mod:`toolctl.keyfile`
    for the checks a key file must pass."""
    with key_file_errors():
        return load_or_create_key(path, _WHAT)
