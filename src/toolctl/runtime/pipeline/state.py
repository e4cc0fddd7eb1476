"""The state of one run (:class:`RunState`) and the small pieces every pipeline step shares."""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolctl.budget import DEFAULT_BUDGET_MS, ValidationBudget
from toolctl.runtime.context import AbortSignal, ToolContext
from toolctl.runtime.exctext import describe
from toolctl.runtime.execution.isolation.limits import ResourceLimits
from toolctl.runtime.pipeline.plan import validator_for
from toolctl.runtime.redact import (
    Redactor,
    hide_values,
    redact_text,
    redactor_for,
    scrub_json,
    scrub_text,
)
from toolctl.runtime.result import (
    ApprovalInfo,
    ErrorCode,
    RunResult,
    RunStatus,
    ToolErrorInfo,
)
from toolctl.schema import SchemaProblem, Validator

if TYPE_CHECKING:
    from toolctl.runtime.options import CallOptions
    from toolctl.runtime.pipeline.plan import ToolPlan

log = logging.getLogger("toolctl.runtime")


class StepFailed(Exception):
    """Internal: end the run as failed with this error."""

    def __init__(
        self,
        code: str,
        message: str,
        details: list[dict[str, Any]] | None = None,
        status: RunStatus = RunStatus.FAILED,
    ) -> None:
        super().__init__(message)
        self.info = ToolErrorInfo(code, message, details or [])
        self.status = status


class RunCancelled(KeyboardInterrupt):
    """Ctrl-C during a run: the run is recorded as ``cancelled``; ``result`` says so."""

    def __init__(self, result: RunResult) -> None:
        super().__init__(f"run {result.run_id} cancelled")
        self.result = result


@dataclass(frozen=True)
class CallSite:
    """What a call needs from its registry, worked out once per registry: the extra import
    roots, how a background worker finds the registry again, and the resource limits of
    isolated handlers."""

    python_path: tuple[str, ...] = ()
    locator: dict[str, Any] | None = None
    limits: ResourceLimits = field(default_factory=ResourceLimits)
    locked: dict[str, Any] | None = None  # Registry.locked: upstream tools' pinned contracts


class _Entropy:
    """Random bytes from ``os.urandom`` in blocks (one system call per 1,024 run ids)."""

    BLOCK = 4096

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._block = b""
        self._at = 0

    def take(self, n: int) -> bytes:
        with self._lock:
            if self._at + n > len(self._block):
                self._block, self._at = secrets.token_bytes(self.BLOCK), 0
            self._at += n
            return self._block[self._at - n : self._at]


_entropy = _Entropy()


def _fresh_entropy() -> None:
    global _entropy
    _entropy = _Entropy()  # a forked child must never hand out its parent's next ids


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_fresh_entropy)


def new_run_id() -> str:
    """Time-ordered, unguessable: 12 hex digits of milliseconds, 8 random."""
    return f"{int(time.time() * 1000):012x}{_entropy.take(4).hex()}"


class RunState:
    """What one run knows: its tool, options, input, context, views, notes and approval."""

    __slots__ = (
        "_budget",
        "_t0",
        "abort",
        "approval",
        "background",
        "budget_ms",
        "context",
        "display",
        "input",
        "notes",
        "options",
        "plan",
        "resume_data",
        "run_id",
        "secrets",
        "spec",
        "started",
        "timeout",
        "traceback",
        "transcript",
    )

    def __init__(self, plan: ToolPlan, options: CallOptions) -> None:
        self.plan = plan
        self.spec = plan.spec
        self.options = options
        self.run_id = options.run_id or new_run_id()
        self.notes: list[str] = []
        self.display: dict[str, Any] = {}
        self.transcript: dict[str, Any] = {}
        self.input: Any = None  # the arguments (JSON)
        self.context: Any = None  # the request context (JSON)
        self.approval: ApprovalInfo | None = None
        self.resume_data: Any = None
        self.started = time.time()
        self._t0 = time.perf_counter()
        self.abort = AbortSignal()
        self.background = options.background or plan.background
        self.timeout: float | None
        if options.timeout is not None:
            self.timeout = options.timeout
        else:
            self.timeout = plan.background_timeout if self.background else plan.timeout
        self.traceback: str | None = None  # of a failed handler (user frames, redacted)
        # The secret values seen so far (registered once, as each value arrives; replaced, never
        # mutated, so a logging thread reading it never sees it change).
        self.secrets: frozenset[str] = frozenset()
        # input, output and resume validation share one budget (the pipeline sets the
        # project's), made when a check first needs it (most calls never do: see validation)
        self.budget_ms: float = DEFAULT_BUDGET_MS
        self._budget: ValidationBudget | None = None

    @property
    def budget(self) -> ValidationBudget:
        """The call's validation budget (``run.validationBudgetMs``)."""
        if self._budget is None:
            self._budget = ValidationBudget(self.budget_ms)
        return self._budget

    def result(
        self,
        status: RunStatus,
        *,
        output: Any = None,
        error: ToolErrorInfo | None = None,
        model_output: dict[str, Any] | None = None,
        suspend_payload: Any = None,
        ended: bool = True,
    ) -> RunResult:
        """The run's result as it stands (``ended``: with its end time and duration). What a
        model or a person sees (model output, views, error) is scrubbed of the run's secret
        values here, once; ``output`` and ``suspend_payload`` stay raw, for the application."""
        display, transcript = self.display, self.transcript
        known = self.secrets
        if known:
            # One search over all three (the common case: none quotes a secret, no copy).
            shown = hide_values([model_output, display, transcript], known)
            model_output, display, transcript = shown
            error = self.scrub_error(error) if error is not None else None
        return RunResult(
            run_id=self.run_id,
            tool=self.spec.name,
            status=status,
            output=output,
            model_output=model_output,
            display=display,
            transcript=transcript,
            error=error,
            suspend_payload=suspend_payload,
            started_at=self.started,
            ended_at=time.time() if ended else None,
            duration_ms=(time.perf_counter() - self._t0) * 1000.0 if ended else None,
            notes=self.notes,
            traceback=self.traceback,
            secrets=self.secrets,
        )

    def register(
        self,
        value: Any,
        schema: Any,
        *,
        marked_only: bool = False,
        redactor: Redactor | None = None,
    ) -> None:
        """Register the secret values in ``value`` (shaped by ``schema``): the fields the schema
        marks ``x-sensitive``/``writeOnly`` under any applicator, and (unless ``marked_only``:
        output, whose key names are not the caller's) fields with secret-like names.
        ``redactor``: one made for a schema of this call only (a form a handler asked), kept
        out of the per-schema cache the tools' own schemas share."""
        if not isinstance(value, (dict, list, str, int, float)) or isinstance(value, bool):
            return
        redactor = redactor or self.plan.redactor(schema)
        if marked_only:
            if not redactor.marks:
                return  # the common case: an output schema that marks nothing
            found = redactor.marked_values(value)
        else:
            found = redactor.secret_values(value)
        if found and not found <= self.secrets:
            self.secrets = self.secrets | found

    def secret_values(self) -> frozenset[str]:
        """The secret values this run holds (see :meth:`register`), for scrubbing free text."""
        return self.secrets

    def scrub(self, text: str) -> str:
        """``text`` with this run's secret values and secret-shaped substrings redacted: for
        any text that comes out of user code (error messages, notes, logs, tracebacks)."""
        secrets_ = self.secrets
        return scrub_text(text, secrets_) if secrets_ else redact_text(text)

    def scrub_json(self, value: Any) -> Any:
        """A copy of the JSON ``value`` with :meth:`scrub` applied to every string."""
        return scrub_json(value, self.scrub) if value is not None else None

    def scrub_error(self, info: ToolErrorInfo) -> ToolErrorInfo:
        """``info`` with its message and details scrubbed: the one way out of a run's error."""
        return ToolErrorInfo(info.code, self.scrub(info.message), self.scrub_json(info.details))

    def note(self, text: str) -> str:
        """Add a note to the run, redacted (and return it): the same list is the result's, the
        stored row's and the hooks' (so every sink gets it redacted once, here)."""
        text = self.scrub(text)
        self.notes.append(text)
        return text

    def handler_error(self, exc: BaseException) -> ToolErrorInfo:
        """The error of a handler that raised ``exc`` (message scrubbed of secrets)."""
        name = type(exc).__name__
        return ToolErrorInfo(
            ErrorCode.HANDLER_ERROR.value, self.scrub(describe(exc)), [{"type": name}]
        )

    def context_for_handler(self) -> ToolContext:
        return ToolContext(
            run_id=self.run_id,
            tool_name=self.spec.name,
            request_context=self.context,
            timeout=self.timeout,
            resume_data=self.resume_data,
            approval=self.approval,
            on_progress=self.options.on_progress,
            abort=self.abort,
            scrub=self.scrub,
            client_capabilities=self.options.client_capabilities,
        )


# ---------------------------------------------------------------- schema checks


def schema_problems(
    schema: Any,
    value: Any,
    validator: Validator | None = None,
    budget: ValidationBudget | None = None,
) -> list[dict[str, Any]]:
    """Validation problems of ``value`` against ``schema`` (whose ``validator`` the caller may
    already have), redacted. Charged to ``budget``: past it
    :class:`~toolctl.budget.ValidationRefused` (without one, a refusal is one problem)."""
    problems = (validator or validator_for(schema)).errors(value, budget=budget)
    if not problems:
        return []
    # jsonschema's messages quote the offending value; these details reach the model, the
    # terminal and the history, so they are redacted like the arguments themselves.
    hidden = redactor_for(schema).redact(value)
    return [_redacted_problem(p, value, hidden) for p in problems]


_MISSING = object()


def _at(value: Any, path: tuple[str | int, ...]) -> Any:
    for step in path:
        try:
            value = value[step]
        except (KeyError, IndexError, TypeError):
            return _MISSING
    return value


def _redacted_problem(problem: SchemaProblem, value: Any, hidden: Any) -> dict[str, Any]:
    data = problem.to_dict()
    message = data["message"]
    original, redacted = _at(value, problem.path), _at(hidden, problem.path)
    if original is not _MISSING and original != redacted:
        message = message.replace(repr(original), repr(redacted))  # how jsonschema quotes it
    data["message"] = redact_text(message)
    return data
