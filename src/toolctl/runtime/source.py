"""What the runtime needs of a registry: :class:`ToolSource`.

The call pipeline, the pending-run continuations and the background worker look tools up by
name and find the project (its history, python path, resource limits); nothing else of
:class:`~toolctl.registry.Registry`. Taking this protocol keeps the runtime independent of how
tools were loaded (a YAML registry, a test double, an imported upstream).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from toolctl.config import Project
    from toolctl.spec import ToolSpec


class ToolSource(Protocol):
    """Tools by name, and the project they belong to (None: no project, no history)."""

    @property
    def project(self) -> Project | None:
        """The project: where its run history and configuration are."""
        ...

    @property
    def locked(self) -> dict[str, Any] | None:
        """The lock entries by tool name under ``--locked`` (None: unlocked): a tool calling
        an upstream MCP server is checked against its entry before each call."""
        ...

    def get(self, name: str) -> ToolSpec:
        """The tool ``name``; :class:`~toolctl.errors.UsageError` naming it when unknown."""
        ...
