"""Tool contracts: the lock file, the semantic diff and the semver gate.

A tool's *contract* is what models and clients rely on: name, description, schemas,
annotations, approval and strictness (see :func:`contract_of`). ``toolctl lock`` records each
enabled tool's contract, runtime policy, version, handler and digests in ``toolctl.lock``;
:func:`diff` classifies every change between two sides (lock file, directory or git ref) as
breaking, safety, undecided, model-visible text, compatible or other; :func:`check_lock` is what
``lock --check`` and the ``--locked`` switches of ``serve`` and ``export`` use.

>>> import toolctl
>>> from toolctl.contract import check_lock
>>> result = check_lock(toolctl.load_project("."))  # doctest: +SKIP
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolctl.contract.canonical import canonical_json, digest
from toolctl.contract.changes import CODES, Change, Kind
from toolctl.contract.diff import FAIL_ON, DiffResult, diff
from toolctl.contract.lockfile import LOCK_NAME, parse, read, render, write
from toolctl.contract.model import META_KEY, LockEntry, contract_digest, contract_of
from toolctl.contract.sides import Side, entries_of, lock_path, registry_side, resolve

if TYPE_CHECKING:
    from pathlib import Path

    from toolctl.registry import Registry


__all__ = [
    "CODES",
    "FAIL_ON",
    "LOCK_NAME",
    "META_KEY",
    "Change",
    "DiffResult",
    "Kind",
    "LockEntry",
    "Side",
    "canonical_json",
    "check_lock",
    "contract_digest",
    "contract_of",
    "diff",
    "digest",
    "entries_of",
    "lock_path",
    "parse",
    "read",
    "registry_side",
    "render",
    "resolve",
    "verify_locked",
    "write",
]


def check_lock(registry: Registry, path: Path | None = None) -> DiffResult:
    """The registry against its lock file (``toolctl.lock`` at the project root by default).

    An empty ``changes`` list means it matches exactly. Raises :class:`~toolctl.errors.LockError`
    when there is no lock file or it cannot be read, and
    :class:`~toolctl.errors.DeclarationError` when the registry has errors.
    """
    from toolctl.config import project_for
    from toolctl.contract.sides import lock_side

    project = registry.project or project_for(None)
    lock = lock_side(path or lock_path(project))
    return diff(lock, registry_side(registry, "working tree"))


def verify_locked(
    registry: Registry, path: Path | None = None, *, verify_key: Path | None = None
) -> None:
    """Raise :class:`~toolctl.errors.LockError` (with one diagnostic per change) unless the
    registry matches its lock file exactly: what ``--locked`` serving and exporting require.
    With ``verify_key`` (an Ed25519 public key, PEM) the lock must also carry a valid
    signature by that key (``toolctl.lock.sig``, :mod:`toolctl.contract.signing`)."""
    from toolctl.contract.report import diagnostics, summary
    from toolctl.errors import LockError

    if verify_key is not None:
        from toolctl.config import project_for
        from toolctl.contract.signing import verify

        verify(path or lock_path(registry.project or project_for(None)), verify_key)
    result = check_lock(registry, path)
    if result.changes:
        raise LockError(
            f"the registry differs from {result.base.label} ({summary(result)}); "
            "refusing to use it with --locked",
            hint="review the changes with `toolctl diff`, then accept them with `toolctl lock`",
            diagnostics=diagnostics(result),
        )
    registry.locked = dict(result.base.entries)  # upstream tools are checked again per call
