"""The values a call returns: run states, error info and :class:`RunResult`."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any


class RunStatus(str, enum.Enum):
    """Where a run is. ``running``, ``awaiting_approval`` and ``suspended`` are not final."""

    RUNNING = "running"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    AWAITING_APPROVAL = "awaiting_approval"
    DECLINED = "declined"
    SUSPENDED = "suspended"
    TIMED_OUT = "timed_out"
    CANCELLED = "cancelled"
    INTERRUPTED = "interrupted"

    @property
    def final(self) -> bool:
        """True when nothing more will happen to a run in this state."""
        return self not in _PENDING

    @property
    def pending(self) -> bool:
        """True for states that wait for someone (approval, resume, a background worker)."""
        return self in _PENDING

    def __str__(self) -> str:
        return self.value


_PENDING = frozenset({RunStatus.RUNNING, RunStatus.AWAITING_APPROVAL, RunStatus.SUSPENDED})


class ErrorCode(str, enum.Enum):
    """Stable codes in :attr:`ToolErrorInfo.code`."""

    INVALID_ARGUMENTS = "invalid_arguments"
    INVALID_INPUT = "invalid_input"
    INVALID_CONTEXT = "invalid_context"
    INVALID_OUTPUT = "invalid_output"
    HANDLER_ERROR = "handler_error"
    TIMEOUT = "timeout"
    CANCELLED = "cancelled"
    APPROVAL_REQUIRED = "approval_required"
    DECLINED = "declined"
    INVALID_RESUME = "invalid_resume"
    NO_HANDLER = "no_handler"
    HANDLER_NOT_FOUND = "handler_not_found"
    INTERRUPTED = "interrupted"
    DAMAGED_RECORD = "damaged_record"  # a history row read back with unreadable columns
    EXPIRED = "expired"  # a pending run nobody answered within run.approvalTtl
    RATE_LIMITED = "rate_limited"  # limits.callsPerMinute reached for this caller and tool

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class ToolErrorInfo:
    """A tool error a model can act on: a stable ``code``, a ``message`` and per-field details.

    ``details`` items are ``{"path": "/json/pointer", "message": ...}`` for validation errors, or
    free ``{"type": ..., ...}`` items otherwise. Secrets are already redacted, in the detail
    messages too (they quote values).
    """

    code: str
    message: str
    details: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {"code": str(self.code), "message": self.message, "details": list(self.details)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ToolErrorInfo:
        return cls(str(data["code"]), str(data["message"]), list(data.get("details") or []))

    def text(self) -> str:
        """The message with one line per detail: what a model reads."""
        lines = [self.message]
        for item in self.details:
            if "path" in item and "message" in item:
                lines.append(f"- {item['path']}: {item['message']}")
            elif "message" in item:
                lines.append(f"- {item['message']}")
        return "\n".join(lines)


@dataclass(frozen=True)
class ApprovalRequest:
    """What an approver decides on: the tool, the run and the display-transformed input."""

    run_id: str
    tool: str
    display_input: Any
    tool_digest: str
    input_hash: str
    title: str | None = None
    annotations: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class ApprovalInfo:
    """How a run was approved; bound to the tool definition and the input it approved."""

    approved: bool
    by: str
    at: float
    tool_digest: str
    input_hash: str
    reason: str | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "approved": self.approved,
            "by": self.by,
            "at": self.at,
            "tool_digest": self.tool_digest,
            "input_hash": self.input_hash,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ApprovalInfo:
        return cls(
            bool(data["approved"]),
            str(data["by"]),
            float(data["at"]),
            str(data["tool_digest"]),
            str(data["input_hash"]),
            data.get("reason"),
        )


@dataclass
class RunResult:
    """The outcome of one call (or the current state of a pending run).

    ``output`` is the raw handler output; ``model_output`` is what a model should see
    (``{"type": "text"|"json"|"content", "value": ...}``); ``display`` and ``transcript`` map each
    phase (input, output, error, suspend, ...) to its transformed, redacted payload. A suppressed
    phase is absent. ``traceback`` is the failed handler's traceback (its own frames, redacted):
    for the developer (``toolctl run --traceback``, ``runs show``, the server log), never for the
    model.
    """

    run_id: str
    tool: str
    status: RunStatus
    output: Any = None
    model_output: dict[str, Any] | None = None
    display: dict[str, Any] = field(default_factory=dict)
    transcript: dict[str, Any] = field(default_factory=dict)
    error: ToolErrorInfo | None = None
    suspend_payload: Any = None
    started_at: float | None = None
    ended_at: float | None = None
    duration_ms: float | None = None
    notes: list[str] = field(default_factory=list)
    traceback: str | None = None
    # The secret values the run saw (never serialised): what every front end scrubs from what
    # it shows or sends (:meth:`scrub`).
    secrets: frozenset[str] = field(default=frozenset(), repr=False, compare=False)

    def scrub(self, value: Any) -> Any:
        """A copy of the JSON ``value`` with the run's secret values (and secret-shaped strings)
        replaced by ``[REDACTED]`` in every string: for anything a front end prints or sends
        that is not already a redacted view (the raw output, a whole result as JSON)."""
        from toolctl.runtime.redact import scrub_json, scrubber

        return scrub_json(value, scrubber(self.secrets))

    @property
    def ok(self) -> bool:
        """True when the handler ran and its output is usable."""
        return self.status is RunStatus.SUCCEEDED

    @property
    def is_error(self) -> bool:
        """True when a model should be told the call failed (MCP ``isError``)."""
        return self.error is not None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view (``--format json``)."""
        return {
            "run_id": self.run_id,
            "tool": self.tool,
            "status": self.status.value,
            "output": self.output,
            "model_output": self.model_output,
            "display": self.display,
            "transcript": self.transcript,
            "error": self.error.to_dict() if self.error else None,
            "suspend_payload": self.suspend_payload,
            "started_at": self.started_at,
            "ended_at": self.ended_at,
            "duration_ms": self.duration_ms,
            "notes": list(self.notes),
            "traceback": self.traceback,
        }
