"""The call pipeline (DESIGN §3): one implementation for the CLI, the API, tests and MCP.

parse → onInputAvailable → validate input → validate request context → approval → execute
(sync/async, timeout, suspend) → validate output → onOutput → toModelOutput → display/transcript
transforms → record.

A :class:`Call` runs as a coroutine. ``sync=True`` drives it without an event loop (the fast path
of :func:`toolctl.runtime.api.call`): every ``await`` inside then completes at once, and real
awaiting (async hooks or handlers) is done with a private loop by :meth:`Call.resolve`.

This module holds the step sequence (parse and validate the arguments and the request context,
then approval, then execution); each step lives in its own module, layered into :class:`Call`:
``callstate`` (run state, options, results) → ``views`` (display/transcript per phase) →
``recording`` (history rows) → ``approval`` → ``suspension`` (suspend/resume) → ``output``
(output checks and toModelOutput) → ``execution`` (invoking the handler).
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import Any, TypeVar

from toolctl.errors import InvalidJSONError
from toolctl.runtime import jsondata
from toolctl.runtime.callstate import (
    Approver,
    OnSuspend,
    Options,
    Progress,
    RunCancelled,
    StepFailed,
    new_run_id,
    schema_problems,
)
from toolctl.runtime.execution import CallExecution
from toolctl.runtime.redact import redactor_for
from toolctl.runtime.result import ErrorCode, RunResult

T = TypeVar("T")


def _from_strict(schema: dict[str, Any], value: dict[str, Any]) -> Any:
    """An OpenAI-strict call mapped back to the declared schema.

    The strict export makes optional properties nullable and required, so a model sends
    ``null`` for an argument it leaves out; only nulls the declared schema would not accept are
    dropped (imported lazily: only strict tools pay for the export module).
    """
    from toolctl.export.strict import from_strict_instance

    return from_strict_instance(schema, value)


class Call(CallExecution):
    """One run of one tool. Create it, then ``await`` one of the entry points."""

    async def run(self, raw_input: Any) -> RunResult:
        """A new call, from raw arguments to the result."""
        try:
            await self._prepare(raw_input)
        except StepFailed as exc:
            return self.error_result(exc.info, exc.status)
        pending = await self._approval()
        if pending is not None:
            return pending
        if self.opts.background or self.spec.background:
            return self.start_background()
        return await self.execute()

    async def _prepare(self, raw_input: Any) -> None:
        spec = self.spec
        try:
            if isinstance(raw_input, (str, bytes)):
                value = jsondata.parse(raw_input, what="arguments")
            else:
                value = {} if raw_input is None else raw_input
                jsondata.check(value, what="arguments")
        except InvalidJSONError as exc:
            raise StepFailed(ErrorCode.INVALID_ARGUMENTS.value, exc.message) from None
        if not isinstance(value, dict):
            raise StepFailed(
                ErrorCode.INVALID_ARGUMENTS.value,
                f"arguments must be a JSON object, not {type(value).__name__}",
            )
        if spec.strict and isinstance(spec.input_schema, dict):
            value = _from_strict(spec.input_schema, value)
        self.input = value
        self.phase("input", value, spec.input_schema)
        problems = schema_problems(spec.input_schema, value)
        if problems:
            shown = jsondata.shorten(redactor_for(spec.input_schema).redact(value))
            raise StepFailed(
                ErrorCode.INVALID_INPUT.value,
                f"Tool input validation failed for {spec.name}. Fix these errors and "
                f"try again. Provided arguments: {shown}",
                problems,
            )
        await self.fire("onInputAvailable", input=value)
        self._check_context()

    def _check_context(self) -> None:
        schema = self.spec.request_context_schema
        context = self.opts.context
        try:
            if isinstance(context, (str, bytes)):
                context = jsondata.parse(context, what="request context")
            elif context is not None:
                jsondata.check(context, what="request context")
        except InvalidJSONError as exc:
            raise StepFailed(ErrorCode.INVALID_CONTEXT.value, exc.message) from None
        if schema is not None:
            problems = schema_problems(schema, {} if context is None else context)
            if problems:
                shown = jsondata.shorten(redactor_for(schema).redact(context))
                raise StepFailed(
                    ErrorCode.INVALID_CONTEXT.value,
                    f"Request context validation failed for {self.spec.name}. "
                    f"Provided context: {shown}",
                    problems,
                )
        self.context = context


def drive(coro: Awaitable[T]) -> T:
    """Run a pipeline coroutine created with ``sync=True`` to completion without a loop."""
    assert inspect.iscoroutine(coro)
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("internal error: the synchronous pipeline tried to wait on a loop")


__all__ = [
    "Approver",
    "Call",
    "OnSuspend",
    "Options",
    "Progress",
    "RunCancelled",
    "drive",
    "new_run_id",
]
