"""The slice of toolctl's ``ToolContext`` that the example handlers use, as typing protocols.

The handlers only rely on this structural interface (see ``docs/architecture.md``), so they can be
called from tests with a small fake context and never import the toolctl runtime.
"""

from __future__ import annotations

from collections.abc import Mapping
from contextlib import AbstractContextManager
from typing import Any, NoReturn, Protocol


class AbortSignal(Protocol):
    """Tells a handler that its run was cancelled or timed out."""

    @property
    def aborted(self) -> bool:
        """True once the run should stop."""
        ...

    def raise_if_aborted(self) -> None:
        """Raise the runtime's cancellation error when the run was aborted."""
        ...


class Observe(Protocol):
    """Tracing and structured logs (no-ops unless OpenTelemetry or logging is set up)."""

    def span(self, name: str, **attributes: Any) -> AbstractContextManager[Any]:
        """A tracing span around a block of work."""
        ...

    def log(self, msg: str, /, **fields: Any) -> None:
        """A structured log record (secrets in ``fields`` are redacted)."""
        ...


class Context(Protocol):
    """What a handler taking ``(input, ctx)`` receives."""

    @property
    def request_context(self) -> Mapping[str, Any] | None:
        """The caller's request context, already validated against ``requestContextSchema``."""
        ...

    @property
    def resume_data(self) -> Mapping[str, Any] | None:
        """Data a suspended run was resumed with (validated against ``resumeSchema``), or None."""
        ...

    @property
    def answers(self) -> Mapping[str, Any]:
        """The client's answers by request key: to the tool's ``inputRequests`` (asked before
        the handler ran) and to earlier ``ctx.ask`` rounds."""
        ...

    @property
    def abort(self) -> AbortSignal:
        """The run's abort signal."""
        ...

    @property
    def observe(self) -> Observe:
        """Tracing and logging helpers."""
        ...

    def suspend(self, payload: Mapping[str, Any]) -> NoReturn:
        """Suspend the run with ``payload`` (validated against ``suspendSchema``); never returns."""
        ...

    def progress(
        self, value: float, total: float | None = None, message: str | None = None
    ) -> None:
        """Report progress of a long run."""
        ...


def context_value(ctx: Context | None, key: str) -> Any:
    """``ctx.request_context[key]``, or None when there is no context or no such key."""
    if ctx is None or not ctx.request_context:
        return None
    return ctx.request_context.get(key)
