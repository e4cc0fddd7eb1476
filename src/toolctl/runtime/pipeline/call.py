"""The call pipeline (DESIGN §3): one implementation for the CLI, the API, tests and MCP.

A :class:`Call` is one run of one tool: its :class:`~toolctl.runtime.pipeline.state.RunState` and
the
collaborators that act on it — :class:`~toolctl.runtime.pipeline.views.Views` (display/transcript
per
phase), :class:`~toolctl.runtime.pipeline.recording.Recorder` (history rows),
:class:`~toolctl.runtime.pipeline.approval.ApprovalGate`,
:class:`~toolctl.runtime.pipeline.suspension.Suspension`
and :class:`~toolctl.runtime.pipeline.executor.Executor`. The steps, in order, are the methods
below:

1. parse the arguments (strict JSON)                          :meth:`Call.run` / ``_parse``
   then fill in the schema's defaults                         ``schemadefaults.fill_defaults``
2. ``onInputAvailable`` (``onInputStart``/``onInputDelta``: :mod:`~toolctl.runtime.streaming`)
3. validate the input                                         ``_validate_input``
4. validate the request context                               ``_check_context``
5. approval                                                   ``ApprovalGate.decide``
   then the tool's declared ``inputRequests``, asked before it runs  :meth:`Call.proceed`
6. execute the handler (or hand the run to a background worker) :meth:`Call.execute`
7. suspend / resume                                           ``Suspension``
8. validate the output                                        ``output.check_output``
9. ``onOutput``, ``toModelOutput``, display/transcript views  ``_succeeded``
10. record the run                                            ``Recorder``

The pipeline is a coroutine: ``acall`` awaits it, the synchronous API runs it with
:func:`toolctl.runtime.sync.run_sync`. A pending run (approve, resume, a background
worker)
continues through :meth:`Call.continue_pending`.
"""

from __future__ import annotations

import dataclasses
import functools
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from toolctl.errors import InvalidJSONError
from toolctl.principal import Principal
from toolctl.runtime import clientask, jsondata, ratelimit
from toolctl.runtime.context import SuspendRequested
from toolctl.runtime.execution.invoke import HandlerExit, HandlerTimeout, Saturated
from toolctl.runtime.execution.tracebacks import user_traceback
from toolctl.runtime.history import writer as history
from toolctl.runtime.pipeline import hooks, output, validation
from toolctl.runtime.pipeline.approval import ApprovalGate, approval_needed
from toolctl.runtime.pipeline.executor import Executor
from toolctl.runtime.pipeline.plan import plan_for
from toolctl.runtime.pipeline.recording import Recorder
from toolctl.runtime.pipeline.state import (
    CallSite,
    RunCancelled,
    RunState,
    StepFailed,
    log,
    new_run_id,
)
from toolctl.runtime.pipeline.suspension import Suspension
from toolctl.runtime.pipeline.views import Views
from toolctl.runtime.redact import hold_secrets, redactor_for, release_secrets
from toolctl.runtime.result import ApprovalInfo, ErrorCode, RunResult, RunStatus, ToolErrorInfo
from toolctl.runtime.sync import cancelled_error
from toolctl.schemadefaults import fill_defaults
from toolctl.schemamessages import json_type

if TYPE_CHECKING:
    from toolctl.runtime.history.records import RunRecord, RunStore
    from toolctl.runtime.options import CallOptions
    from toolctl.spec import ToolSpec

RUNNING_ROW_GRACE_S = 0.05  # a read-only call still running after this gets its running row


def _from_strict(schema: dict[str, Any], value: dict[str, Any]) -> Any:
    """An OpenAI-strict call mapped back to the declared schema.

    The strict export makes optional properties nullable and required, so a model sends
    ``null`` for an argument it leaves out; only nulls the declared schema would not accept are
    dropped (imported lazily: only strict tools pay for the export module, and only for a call
    with a null in it: without one there is nothing to drop).
    """
    if not _has_null(value):
        return value
    from toolctl.export.strict import from_strict_instance

    return from_strict_instance(schema, value)


def _has_null(value: Any) -> bool:
    """Whether a JSON value holds ``null`` anywhere."""
    if value is None:
        return True
    if isinstance(value, dict):
        return any(_has_null(v) for v in value.values())
    if isinstance(value, list):
        return any(_has_null(v) for v in value)
    return False


def _secrets_source(state: RunState) -> Callable[[], frozenset[str]]:
    """What :func:`hold_secrets` holds while a run's steps run, so that what hooks, handlers,
    transforms and ``toModelOutput`` callables log or warn is scrubbed of the run's secrets.
    The source is a partial of its own: the executor holds ``state.secret_values`` for the
    handler (a bound method, equal to every other of this state) and releases it when the
    handler ends, which must not release this. (A try/finally at each use, not a context
    manager: this is on every call's path.)"""
    source = functools.partial(RunState.secret_values, state)
    hold_secrets(source)
    return source


class Call:
    """One run of one tool. Build it, then ``await`` :meth:`run` (a new call) or
    :meth:`execute` (a pending run continued, see :meth:`continue_pending`)."""

    __slots__ = ("executor", "interrupted", "recorder", "site", "state", "views")

    def __init__(
        self,
        spec: ToolSpec,
        store: RunStore,
        site: CallSite,
        options: CallOptions,
        *,
        recorded: bool = False,
        owner: str | None = None,
        status: str = RunStatus.RUNNING.value,
    ) -> None:
        self.state = RunState(plan_for(spec), options)
        self.state.budget_ms = site.limits.validation_budget_ms
        self.site = site
        self.views = Views(self.state, site.python_path)
        self.recorder = Recorder(
            self.state,
            self.views,
            store,
            site.locator,
            recorded=recorded,
            owner=owner,
            status=status,
        )
        self.executor = Executor(self.state, site)
        self.interrupted: RunResult | None = None  # the cancelled result, after Ctrl-C

    @classmethod
    def continue_pending(
        cls,
        rec: RunRecord,
        spec: ToolSpec,
        store: RunStore,
        site: CallSite,
        options: CallOptions,
        *,
        owner: str | None = None,
    ) -> Call:
        """The call that continues the stored run ``rec`` (approve, resume, a background
        worker): its id, input, request context, timeout, approval and notes come from the
        row."""
        options = dataclasses.replace(
            options,
            run_id=rec.run_id,
            context=rec.raw_context,
            background=rec.background,
            timeout=rec.timeout,
            origin=rec.origin,
            principal=Principal.from_public(rec.principal),
        )
        site = dataclasses.replace(site, locator=rec.registry or site.locator)
        call = cls(spec, store, site, options, recorded=True, owner=owner, status=rec.status)
        state = call.state
        state.input, state.context = rec.raw_input, rec.raw_context
        state.register(rec.raw_input, spec.input_schema)
        state.register(rec.raw_context, spec.request_context_schema)
        state.notes.extend(rec.notes)  # what happened to it so far (already redacted)
        if rec.approval:
            state.approval = ApprovalInfo.from_dict(rec.approval)
        if rec.raw_resume is not None:  # a queued run's answers to its tool's inputRequests
            asked = clientask.first_questions(spec.input_requests or {}, None)
            call.suspension.register_answers(rec.raw_resume, asked)
            state.resume_data = rec.raw_resume
        if rec.raw_input is not None:
            call.views.phase("input", rec.raw_input, spec.input_schema)
        return call

    def cancelled_error(self) -> RunCancelled:
        """What the synchronous API raises on Ctrl-C: the run recorded as cancelled."""
        return RunCancelled(self.interrupted or self.recorder.cancelled())

    # ------------------------------------------------------------ collaborators on demand

    @property
    def approval(self) -> ApprovalGate:
        return ApprovalGate(self.state, self.views, self.recorder)

    @property
    def suspension(self) -> Suspension:
        return Suspension(self.state, self.views, self.recorder)

    @property
    def run_id(self) -> str:
        return self.state.run_id

    # ------------------------------------------------------------ steps 1-5

    async def run(self, raw_input: Any) -> RunResult:
        """A new call, from raw arguments to the result."""
        state = self.state
        source = _secrets_source(state)
        try:
            return await self._run(state, raw_input)
        finally:
            release_secrets(source)

    async def _run(self, state: RunState, raw_input: Any) -> RunResult:
        # (the common case of each step without a coroutine of its own: no transform that
        # calls code, input the fast validator accepts, no hook: every call pays this path)
        plan = state.plan
        if state.spec.calls_per_minute is not None or self.site.limits.calls_per_minute:
            limited = await self._rate_limited()  # 0: before any work, and never recorded
            if limited is not None:
                return limited
        try:
            state.input = self._parse(raw_input)  # 1
            accepted = plan.input_validator.loop_accept(state.input)
            if not (accepted and plan.input_redactor.accepts_no_secrets):
                state.register(state.input, state.spec.input_schema)
            if "inputDelta" in state.display or "inputDelta" in state.transcript:
                self.views.rescrub_deltas()  # streamed before its secrets were known
            if plan.calls_code("input"):
                await self.views.aphase("input", state.input, state.spec.input_schema)
            else:
                self.views.phase("input", state.input, state.spec.input_schema)
            if not accepted:
                await self._validate_input()  # 3
            if "onInputAvailable" in state.spec.hooks:
                await self.fire("onInputAvailable", input=state.input)  # 2
            state.context = await self._check_context()  # 4
        except StepFailed as exc:
            return await self.recorder.error_result_async(exc.info, exc.status)
        if state.spec.require_approval and await approval_needed(state):  # 5
            pending = await self.approval.decide()
            if pending is not None:
                return pending
        if state.spec.input_requests:  # 5b, already holding the run's secrets
            return await self._proceed()
        if state.background:  # 6, in a worker process
            return await self.recorder.start_background_async()
        return await self._execute()  # (the common path pays no coroutine for step 5b)

    async def proceed(self) -> RunResult:
        """An approved (or answered) pending run from step 5 on: :meth:`execute`, after the
        questions its tool declares (``inputRequests``) are answered."""
        return await self._holding_secrets(self._proceed)

    async def _proceed(self) -> RunResult:
        state = self.state
        requests = state.spec.input_requests
        if requests:  # asked before the handler runs, so before a background run is queued
            for _ in range(len(requests) + 1):  # each round answers one request at least
                payload = clientask.first_questions(requests, state.resume_data)
                if payload is None:
                    break
                asked = await self.suspension.suspended(payload)
                if asked is not None:
                    return asked
        if state.background:  # 6, in a worker process (with the answers to inputRequests)
            return await self.recorder.start_background_async(
                state.resume_data if requests else None
            )
        return await self._execute()

    async def _rate_limited(self) -> RunResult | None:
        """The ``rate_limited`` result when this caller used up the tool's calls a minute
        (:mod:`toolctl.runtime.ratelimit`), else None. Charged unless the HTTP front end
        already
        charged it (and answered 429 when it was refused)."""
        state = self.state
        if state.options.rate_charged:
            return None
        store = self.recorder.store

        def take() -> ratelimit.RateLimited | None:
            return ratelimit.take(store, state.spec, self.site, state.options.principal)

        # a PostgreSQL bucket is a round trip: off the event loop when other calls are in flight
        found = await history.write(take) if ratelimit.is_shared(store) else take()
        if found is None:
            return None
        info = found.error()
        return state.result(
            RunStatus.FAILED, error=info, model_output={"type": "text", "value": info.text()}
        )

    def _parse(self, raw_input: Any) -> dict[str, Any]:
        spec = self.state.spec
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
                f"arguments must be a JSON object, not {json_type(value)}",
            )
        if spec.strict and isinstance(spec.input_schema, dict):
            value = _from_strict(spec.input_schema, value)
        if self.state.plan.fills_defaults:
            # the handler finds every argument the schema gives a default (a new object:
            # the caller's stays as passed)
            value = fill_defaults(spec.input_schema, value)
        filled: dict[str, Any] = value
        return filled

    async def _validate_input(self) -> None:
        state = self.state
        spec = state.spec
        problems = await validation.problems(
            state,
            spec.input_schema,
            state.input,
            state.plan.input_validator,
            code=ErrorCode.INVALID_INPUT.value,
            what="input",
        )
        if problems:
            shown = jsondata.shorten(state.plan.input_redactor.redact(state.input))
            raise StepFailed(
                ErrorCode.INVALID_INPUT.value,
                f"Tool input validation failed for {spec.name}. Fix these errors and "
                f"try again. Provided arguments: {shown}",
                problems,
            )

    async def _check_context(self) -> Any:
        spec = self.state.spec
        schema = spec.request_context_schema
        context = self.state.options.context
        try:
            if isinstance(context, (str, bytes)):
                context = jsondata.parse(context, what="request context")
            elif context is not None:
                jsondata.check(context, what="request context")
        except InvalidJSONError as exc:
            raise StepFailed(ErrorCode.INVALID_CONTEXT.value, exc.message) from None
        if context is not None:
            self.state.register(context, schema)
        if schema is not None:
            problems = await validation.problems(
                self.state,
                schema,
                {} if context is None else context,
                code=ErrorCode.INVALID_CONTEXT.value,
                what="request context",
            )
            if problems:
                shown = jsondata.shorten(redactor_for(schema).redact(context))
                raise StepFailed(
                    ErrorCode.INVALID_CONTEXT.value,
                    f"Request context validation failed for {spec.name}. Provided context: {shown}",
                    problems,
                )
        return context

    async def fire(self, name: str, **payload: Any) -> None:
        """Run hook ``name`` if the tool declares it (a failure is noted, never raised)."""
        state = self.state
        if name in state.spec.hooks:
            await hooks.fire(
                state.spec.hooks,
                name,
                {
                    "toolName": state.spec.name,
                    "toolCallId": state.run_id,
                    "runId": state.run_id,
                    "abortSignal": state.abort,
                    **payload,
                },
                python_path=self.site.python_path,
                note=state.note,
            )

    # ------------------------------------------------------------ steps 6-10

    async def execute(self) -> RunResult:
        """Run the handler (again, when resumed) and finish the run."""
        return await self._holding_secrets(self._execute)

    async def _holding_secrets(self, step: Callable[[], Awaitable[RunResult]]) -> RunResult:
        """``step`` of a continued run, its secrets known to every scrubber while it runs."""
        source = _secrets_source(self.state)
        try:
            return await step()
        finally:
            release_secrets(source)

    async def _execute(self) -> RunResult:
        recorder = self.recorder
        try:
            handler = self.executor.load()
        except StepFailed as exc:
            return await recorder.error_result_async(exc.info, exc.status)
        late = await self._start_running()
        try:
            if late:
                out = await self._invoke_late(handler)
            else:
                out = await self.executor.invoke(handler)
        except SuspendRequested as sus:  # 7
            result = await self.suspension.suspended(sus.payload)
            return result if result is not None else await self._execute()
        except HandlerTimeout as exc:
            return await self._timed_out(exc)
        except StepFailed as exc:
            return await recorder.error_result_async(exc.info, exc.status)
        except (KeyboardInterrupt, cancelled_error()) as exc:
            result = self.interrupted = recorder.cancelled()
            if isinstance(exc, KeyboardInterrupt):
                raise RunCancelled(result) from None
            raise
        except Saturated as exc:
            return recorder.error_result(  # no worker free: the error views made in place
                ToolErrorInfo(ErrorCode.HANDLER_ERROR.value, f"executor saturated: {exc}")
            )
        except Exception as exc:
            return await self._handler_failed(exc)
        return await self._succeeded(out)

    async def _invoke_late(self, handler: Callable[..., Any]) -> Any:
        """Invoke the handler; its running row is written if it runs past the grace period
        (by the timer thread: a sync handler may be running in place on this thread). The timer
        is cancelled by the handler's own thread as it returns: on a loop busy with other calls
        this coroutine resumes tens of milliseconds later, and waiting for that had the running
        row written for most quick calls under load (two writes instead of one)."""
        timer = history.later(RUNNING_ROW_GRACE_S, self._mark_running_late)
        try:
            return await self.executor.invoke(handler, ended=timer.cancel)
        finally:
            timer.cancel()

    async def _start_running(self) -> bool:
        """Write the running row, or defer it (see below); True when deferred."""
        recorder = self.recorder
        if not recorder.history:
            recorder.mark_running()  # nothing to write: the run is not recorded
            return False
        if self._defers_running_row():
            recorder.handler_started_at = time.time()  # stored with the final row
            return True
        # Cancelled while the row is being written, the run is recorded as cancelled right after
        # it (the writer keeps order): never left running.
        await history.write(
            recorder.staged_running(), store=recorder.store, if_cancelled=recorder.cancelled
        )
        return False

    def _defers_running_row(self) -> bool:
        """A quick read-only call is recorded with one write, when it ends.

        The ``running`` row exists so that a side effect never goes unrecorded and a run cut
        short by the death of its process is found (and marked ``interrupted``) by the sweep.
        A tool declared ``readOnlyHint: true`` has no side effect to lose, so its row is
        written only when it ends — or, if it is still running after ``RUNNING_ROW_GRACE_S``,
        then (by the timer thread), so a long call shows up as running and stays visible to the
        sweep. Everything else writes the ``running`` row before the handler starts.
        """
        recorder, state = self.recorder, self.state
        return (
            recorder.history
            and recorder.owner is None
            and not recorder.recorded
            and state.spec.annotations.get("readOnlyHint") is True
            and state.spec.isolation != "subprocess"
        )

    def _mark_running_late(self) -> None:
        try:
            self.recorder.mark_running()
        except Exception:  # the final write will report a broken history; keep the call going
            log.exception("could not record run %s as running", self.state.run_id)

    async def _timed_out(self, exc: HandlerTimeout) -> RunResult:
        state = self.state
        if exc.note:
            state.note(exc.note)
        return await self.recorder.error_result_async(
            ToolErrorInfo(
                ErrorCode.TIMEOUT.value,
                f"{state.spec.name} did not finish within {exc.timeout:g} s",
            ),
            RunStatus.TIMED_OUT,
        )

    async def _handler_failed(self, exc: Exception) -> RunResult:
        """The handler raised: a failed run, with the handler's traceback kept for the
        developer (history, ``--traceback``, the server log) and never shown to the model."""
        state = self.state
        original = exc.original if isinstance(exc, HandlerExit) else exc
        found = user_traceback(exc)
        state.traceback = state.scrub(found) if found else None
        return await self.recorder.error_result_async(state.handler_error(original))

    async def _succeeded(self, out: Any) -> RunResult:
        state, recorder = self.state, self.recorder
        plan = state.plan
        if plan.output_redactor.marks:
            state.register(out, plan.output_schema, marked_only=True)
        try:
            await output.check_output(state, out)  # 8
            if "onOutput" in state.spec.hooks:
                await self.fire("onOutput", output=out)  # 9
            # The model sees the output without its sensitive fields (toModelOutput included).
            shown = out if plan.output_sensitive is None else plan.output_sensitive.prune(out)
            to_model = state.spec.to_model_output
            if to_model and "call" in to_model:  # user code: off the loop
                model = await output.model_output(state, shown, self.site.python_path)
            else:
                model = output.model_output_in_place(state, shown, self.site.python_path)
            if plan.calls_code("output"):
                await self.views.aphase("output", out, plan.output_schema)
            else:
                self.views.phase("output", out, plan.output_schema)
        except StepFailed as exc:
            return await recorder.error_result_async(exc.info, exc.status)
        result = state.result(RunStatus.SUCCEEDED, output=out, model_output=model)
        await recorder.finish_async(result)  # 10
        return result


__all__ = ["Call", "CallSite", "RunCancelled", "new_run_id"]
