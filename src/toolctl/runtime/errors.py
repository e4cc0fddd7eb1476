"""Errors of run management (the state store, approve/decline/resume/cancel)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from toolctl.errors import ToolctlError, UsageError
from toolctl.keyfile import KeyFileError


class StateError(ToolctlError):
    """The run history cannot be opened or written (path, permissions, newer schema)."""


class DatabaseUnavailableError(StateError):
    """The run history's database server does not answer (stopped, restarting, unreachable,
    out of connections): nothing is wrong with the setup or the run, so retrying later works."""


class RunNotFoundError(UsageError):
    """No run has this id (or an id prefix matches several runs): like an unknown tool name, a
    usage error (the CLI exits 2, not 1, which means the tool failed)."""


class RunStateError(ToolctlError):
    """The run is not in a state that allows the operation (already resumed, not pending, ...)."""


@contextmanager
def key_file_errors() -> Iterator[None]:
    """A :class:`~toolctl.keyfile.KeyFileError` of a key that seals runs, as a
    :class:`StateError`: the history (or server) cannot go on without its key, and a new key
    orphans what the old one sealed, so the hint says so."""
    try:
        yield
    except KeyFileError as exc:
        hint = f"{exc.hint}; pending runs then need a new request" if exc.hint else None
        raise StateError(exc.message, hint=hint) from None
