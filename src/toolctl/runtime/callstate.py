"""The state of one run and the pieces every pipeline step shares.

:class:`CallState` holds what a run knows (spec, store, options, input, context, views) and
builds results; the steps are layered on it, one module each: views, recording, approval,
suspension, output, execution, and the step sequence in :mod:`toolctl.runtime.pipeline`.
"""

from __future__ import annotations

import inspect
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from toolctl.runtime import hooks
from toolctl.runtime.context import AbortSignal, ToolContext
from toolctl.runtime.invoke import run_blocking
from toolctl.runtime.limits import ResourceLimits
from toolctl.runtime.memstore import MemoryStore
from toolctl.runtime.redact import redact_text, redactor_for
from toolctl.runtime.result import (
    ApprovalInfo,
    ApprovalRequest,
    ErrorCode,
    RunResult,
    RunStatus,
    ToolErrorInfo,
)
from toolctl.schema import SchemaProblem, cached_validator
from toolctl.spec import ToolSpec

log = logging.getLogger("toolctl.runtime")


Approver = Callable[[ApprovalRequest], "Awaitable[bool | None] | bool | None"]
OnSuspend = Callable[[Any, Any], "Awaitable[Any] | Any"]
Progress = Callable[[float, "float | None", "str | None"], None]


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


@dataclass
class Options:
    """Per-call options (see :func:`toolctl.runtime.api.call`)."""

    context: Any = None
    approve: bool | None = None
    decline: bool | str | None = None
    timeout: float | None = None
    background: bool = False
    approver: Approver | None = None
    on_suspend: OnSuspend | None = None
    on_progress: Progress | None = None
    run_id: str | None = None
    approved_by: str = "caller"


def new_run_id() -> str:
    """Time-ordered, unguessable: 12 hex digits of milliseconds, 8 random."""
    return f"{int(time.time() * 1000):012x}{secrets.token_hex(4)}"


_VALIDATORS: dict[int, tuple[Any, Any]] = {}


def schema_problems(schema: Any, value: Any) -> list[dict[str, Any]]:
    """Validation problems of ``value``; validators memoised per schema object (specs are frozen,
    so identity is a cheap key in front of ``cached_validator``'s content key)."""
    found = _VALIDATORS.get(id(schema))
    if found is None or found[0] is not schema:
        if len(_VALIDATORS) > 4096:
            _VALIDATORS.clear()
        found = _VALIDATORS[id(schema)] = (schema, cached_validator(schema))
    problems = found[1].errors(value)
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


class CallState:
    """What one run knows; the pipeline steps build on it (see the module docstring)."""

    def __init__(
        self,
        spec: ToolSpec,
        store: Any,
        *,
        python_path: tuple[str, ...] = (),
        options: Options | None = None,
        sync: bool = False,
        registry: dict[str, Any] | None = None,
        limits: ResourceLimits | None = None,
    ) -> None:
        self.spec = spec
        self.store = store
        self.python_path = python_path
        self.opts = options or Options()
        self.sync = sync
        self.registry = registry
        self.limits = limits or ResourceLimits()  # for isolation: subprocess
        self.run_id = self.opts.run_id or new_run_id()
        self.notes: list[str] = []
        self.display: dict[str, Any] = {}
        self.transcript: dict[str, Any] = {}
        self.input: Any = None
        self.context: Any = None
        self.approval: ApprovalInfo | None = None
        self.resume_data: Any = None
        self.started = time.time()
        self._t0 = time.perf_counter()
        self.recorded = False
        self.owner: str | None = None
        self.abort = AbortSignal()
        self.history = not isinstance(store, MemoryStore)
        self.expect_status = RunStatus.RUNNING.value
        self.handler_started_at: float | None = None  # when no running row recorded it

    async def resolve(self, awaitable: Awaitable[Any]) -> Any:
        """Await ``awaitable`` — on a private loop when driven synchronously."""
        if self.sync:
            return run_blocking(awaitable)
        return await awaitable

    async def _maybe(self, value: Any) -> Any:
        return await self.resolve(value) if inspect.isawaitable(value) else value

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
        now = time.time()
        return RunResult(
            run_id=self.run_id,
            tool=self.spec.name,
            status=status,
            output=output,
            model_output=model_output,
            display=self.display,
            transcript=self.transcript,
            error=error,
            suspend_payload=suspend_payload,
            started_at=self.started,
            ended_at=now if ended else None,
            duration_ms=(time.perf_counter() - self._t0) * 1000.0 if ended else None,
            notes=self.notes,
        )

    @property
    def timeout(self) -> float | None:
        if self.opts.timeout is not None:
            return self.opts.timeout
        if self.opts.background or self.spec.background:
            return self.spec.background_timeout or self.spec.timeout
        return self.spec.timeout

    async def fire(self, name: str, **payload: Any) -> None:
        """Run hook ``name`` if the tool declares it (a failure is noted, never raised)."""
        if name in self.spec.hooks:
            await hooks.fire(
                self.spec.hooks,
                name,
                self._hook_payload(**payload),
                python_path=self.python_path,
                notes=self.notes,
                resolve=self.resolve,
            )

    def _hook_payload(self, **payload: Any) -> dict[str, Any]:
        return {
            "toolName": self.spec.name,
            "toolCallId": self.run_id,
            "runId": self.run_id,
            "abortSignal": self.abort,
            **payload,
        }

    def note(self, text: str) -> None:
        """Add a note to the run, redacted: the same list is the result's, the stored row's and
        the hooks' (so every sink gets it redacted once, here)."""
        self.notes.append(redact_text(text))

    def approval_dict(self) -> dict[str, Any] | None:
        return self.approval.to_dict() if self.approval else None

    @staticmethod
    def _handler_error(exc: BaseException) -> ToolErrorInfo:
        name = type(exc).__name__
        return ToolErrorInfo(
            ErrorCode.HANDLER_ERROR.value, redact_text(f"{name}: {exc}"), [{"type": name}]
        )

    def context_for_handler(self) -> ToolContext:
        return ToolContext(
            run_id=self.run_id,
            tool_name=self.spec.name,
            request_context=self.context,
            timeout=self.timeout,
            resume_data=self.resume_data,
            approval=self.approval,
            on_progress=self.opts.on_progress,
            abort=self.abort,
        )
