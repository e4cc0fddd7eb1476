"""Errors of run management (the state store, approve/decline/resume/cancel)."""

from __future__ import annotations

from toolctl.errors import ToolctlError


class StateError(ToolctlError):
    """The run history cannot be opened or written (path, permissions, newer schema)."""


class RunNotFoundError(ToolctlError):
    """No run has this id (or an id prefix matches several runs)."""


class RunStateError(ToolctlError):
    """The run is not in a state that allows the operation (already resumed, not pending, ...)."""
