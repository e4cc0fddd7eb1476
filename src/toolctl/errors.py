"""Exception types raised by the toolctl core.

The core never prints or exits: it returns values and :class:`~toolctl.diagnostics.Diagnostic`
lists, or raises a :class:`ToolctlError`. The CLI turns these into messages and exit codes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from toolctl.diagnostics import Diagnostic


class ToolctlError(Exception):
    """Base class of every error toolctl raises for a user mistake.

    ``hint`` says how to fix it; ``diagnostics`` carries located findings when there are any.
    """

    def __init__(
        self,
        message: str,
        *,
        hint: str | None = None,
        diagnostics: list[Diagnostic] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.hint = hint
        self.diagnostics = list(diagnostics or [])

    def __str__(self) -> str:
        return self.message if not self.hint else f"{self.message} ({self.hint})"


class YamlError(ToolctlError):
    """A file is not acceptable strict YAML (syntax, aliases, tags, duplicates, limits)."""

    def __init__(
        self,
        message: str,
        *,
        line: int = 0,
        col: int = 0,
        code: str = "TC101",
        hint: str | None = None,
    ) -> None:
        super().__init__(message, hint=hint)
        self.line = line
        self.col = col
        self.code = code


class DeclarationError(ToolctlError):
    """The registry has invalid declarations; ``diagnostics`` lists them all."""


class ConfigError(ToolctlError):
    """The toolctl configuration (toolctl.yaml or [tool.toolctl]) is invalid."""


class HandlerReferenceError(ToolctlError):
    """A ``pkg.module:attr`` reference is malformed, missing or fails to import."""


class UsageError(ToolctlError):
    """The caller asked for something that cannot be done as asked (the CLI exits 2)."""


class UnknownToolError(UsageError):
    """A tool name that the registry does not have."""


class DisabledToolError(UsageError):
    """A tool named explicitly (to run, test or serve) is declared ``enabled: false``."""


class InvalidJSONError(ToolctlError):
    """Arguments or data that are not strict JSON (duplicates, NaN, lone surrogates, limits)."""


class ExportError(ToolctlError):
    """An export could not be produced without changing the declaration's meaning."""


class PluginError(ToolctlError):
    """An entry-point plugin (registry pack, exporter, lint rule) failed to load."""


class LockError(ToolctlError):
    """``toolctl.lock`` is missing, unreadable, or the registry no longer matches it."""
