"""The call pipeline (DESIGN §3): one implementation for the CLI, the API, tests and MCP.

parse → onInputAvailable → validate input → validate request context → approval → execute
(sync/async, timeout, suspend) → validate output → onOutput → toModelOutput → display/transcript
transforms → record.

A :class:`Call` runs as a coroutine. ``sync=True`` drives it without an event loop (the fast path
of :func:`toolctl.runtime.api.call`): every ``await`` inside then completes at once, and real
awaiting (async hooks or handlers) is done with a private loop by :meth:`Call.resolve`.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import secrets
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, TypeVar

from toolctl.errors import HandlerReferenceError, InvalidJSONError, ToolctlError
from toolctl.runtime import history, hooks, jsondata, transforms
from toolctl.runtime.context import AbortSignal, SuspendRequested, ToolContext
from toolctl.runtime.invoke import (
    HandlerTimeout,
    Saturated,
    invoke_async,
    invoke_sync,
    run_blocking,
    wants_context,
)
from toolctl.runtime.loading import load_callable
from toolctl.runtime.redact import redact_text, redactor_for
from toolctl.runtime.result import (
    ApprovalInfo,
    ApprovalRequest,
    ErrorCode,
    RunResult,
    RunStatus,
    ToolErrorInfo,
)
from toolctl.runtime.store import MemoryStore, RunRecord, owner_fields
from toolctl.schema import cached_validator
from toolctl.spec import ToolSpec

log = logging.getLogger("toolctl.runtime")

MAX_OUTPUT_BYTES = 8 * 1024 * 1024
RUNNING_ROW_GRACE_S = 0.05  # a read-only call still running after this gets its running row

Approver = Callable[[ApprovalRequest], "Awaitable[bool | None] | bool | None"]
OnSuspend = Callable[[Any, Any], "Awaitable[Any] | Any"]
T = TypeVar("T")
Progress = Callable[[float, "float | None", "str | None"], None]


class _Failed(Exception):
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


def _problems(schema: Any, value: Any) -> list[dict[str, Any]]:
    """Validation problems of ``value``; validators memoised per schema object (specs are frozen,
    so identity is a cheap key in front of ``cached_validator``'s content key)."""
    found = _VALIDATORS.get(id(schema))
    if found is None or found[0] is not schema:
        if len(_VALIDATORS) > 4096:
            _VALIDATORS.clear()
        found = _VALIDATORS[id(schema)] = (schema, cached_validator(schema))
    return [p.to_dict() for p in found[1].errors(value)]


def _from_strict(schema: dict[str, Any], value: dict[str, Any]) -> Any:
    """An OpenAI-strict call mapped back to the declared schema.

    The strict export makes optional properties nullable and required, so a model sends
    ``null`` for an argument it leaves out; only nulls the declared schema would not accept are
    dropped (imported lazily: only strict tools pay for the export module).
    """
    from toolctl.export.strict import from_strict_instance

    return from_strict_instance(schema, value)


class Call:
    """One run of one tool. Create it, then ``await`` one of the entry points."""

    def __init__(
        self,
        spec: ToolSpec,
        store: Any,
        *,
        python_path: tuple[str, ...] = (),
        options: Options | None = None,
        sync: bool = False,
        registry: dict[str, Any] | None = None,
    ) -> None:
        self.spec = spec
        self.store = store
        self.python_path = python_path
        self.opts = options or Options()
        self.sync = sync
        self.registry = registry
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

    # ------------------------------------------------------------ awaiting

    async def resolve(self, awaitable: Awaitable[Any]) -> Any:
        """Await ``awaitable`` — on a private loop when driven synchronously."""
        if self.sync:
            return run_blocking(awaitable)
        return await awaitable

    async def _maybe(self, value: Any) -> Any:
        return await self.resolve(value) if inspect.isawaitable(value) else value

    # ------------------------------------------------------------ transforms

    def phase(self, phase: str, payload: Any, schema: Any = None) -> None:
        """Record the display and transcript forms of ``payload`` (transformed, redacted)."""
        tspec = self.spec.transform
        specs = [tspec.get(t, {}).get(phase) if tspec else None for t in ("display", "transcript")]
        redactor = redactor_for(schema)
        if specs == [None, None]:
            # No transform: both targets show the same redacted payload; redact it once.
            shown = redactor.redact(payload)
            self._put(self.display, phase, shown)
            self._put(self.transcript, phase, shown)
            return
        for target, out, spec in (
            ("display", self.display, specs[0]),
            ("transcript", self.transcript, specs[1]),
        ):
            value = self._transform(spec, payload, phase, target)
            if value is transforms.SUPPRESSED:
                out.pop(phase, None)
            else:
                self._put(out, phase, redactor.redact(value))

    def _transform(self, spec: Any, payload: Any, phase: str, target: str) -> Any:
        info = {
            "phase": phase,
            "target": target,
            "toolName": self.spec.name,
            "runId": self.run_id,
            "toolCallId": self.run_id,
        }
        try:
            return transforms.apply(spec, payload, info, self.python_path)
        except (transforms.TransformError, ToolctlError) as exc:
            # Never fall back to the raw payload: show the failure instead.
            self.notes.append(redact_text(f"{target} transform for {phase} failed: {exc}"))
            return {"transformError": redact_text(str(exc))}

    @staticmethod
    def _put(out: dict[str, Any], phase: str, value: Any) -> None:
        if phase == "inputDelta":
            out.setdefault(phase, []).append(value)
        else:
            out[phase] = value

    # ------------------------------------------------------------ results

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

    def error_result(self, info: ToolErrorInfo, status: RunStatus = RunStatus.FAILED) -> RunResult:
        self.phase("error", info.to_dict())
        result = self.result(
            status, error=info, model_output={"type": "text", "value": info.text()}
        )
        self.finish(result)
        return result

    # ------------------------------------------------------------ recording

    def _record(self, result: RunResult, **extra: Any) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "status": result.status.value,
            "input": self.transcript.get("input"),
            "output": self.transcript.get("output"),
            "error": self.transcript.get("error") if result.error else None,
            "suspend": self.transcript.get("suspend"),
            "resume": self.transcript.get("resume"),
            "notes": [redact_text(n) for n in self.notes],
            "model_output": self._stored_model_output(result),
            "display": self._stored_display(),
            "ended_at": result.ended_at,
            "duration_ms": result.duration_ms,
        }
        if result.status.final:
            fields.update(raw_input=None, raw_context=None, owner=None)
        fields.update(extra)
        return fields

    # What a caller collecting a result later (runs wait, a background run) needs besides the
    # transcript: the model output and the display views. Both are transformed for their
    # audience, but a view without its own transform is the raw payload (redacted): it is kept
    # only when the transcript does not transform that payload either, so the history never
    # holds what the transcript hides.

    def _declares(self, target: str, phase: str) -> bool:
        declared = self.spec.transform.get(target) or {}
        if phase == "approval" and "approval" not in declared:
            phase = "input"  # the approval view defaults to the input view
        return phase in declared

    def _storable(self, phase: str) -> bool:
        """The display view of ``phase`` may be stored (see above)."""
        return self._declares("display", phase) or not self._declares("transcript", phase)

    def _stored_display(self) -> dict[str, Any]:
        return {phase: value for phase, value in self.display.items() if self._storable(phase)}

    def _stored_model_output(self, result: RunResult) -> dict[str, Any] | None:
        model = result.model_output
        if model is None:
            return None
        if result.status is RunStatus.SUSPENDED:
            return model if self._storable("suspend") else None  # it shows the suspend view
        if result.status is not RunStatus.SUCCEEDED:
            return model  # error and pending messages: built from redacted text
        if transforms.shows_raw_output(self.spec.to_model_output) and self._declares(
            "transcript", "output"
        ):
            return None
        schema = self.spec.output_schema if isinstance(self.spec.output_schema, dict) else None
        return {**model, "value": redactor_for(schema).redact(model.get("value"))}

    def _new_record(self) -> RunRecord:
        return RunRecord(
            run_id=self.run_id,
            tool=self.spec.name,
            status=RunStatus.RUNNING.value,
            tool_digest=self.spec.digest,
            created_at=self.started,
            input_hash=jsondata.digest(self.input) if self.input is not None else None,
            background=bool(self.opts.background or self.spec.background),
            timeout=self.timeout,
            registry=self.registry,
            approval=self.approval_dict(),
        )

    def _write(
        self, fields: dict[str, Any], *, cas: bool = True, durable: bool = False
    ) -> str | None:
        """Insert the run's row, or update it — with ``cas``, only if it is still in
        ``expect_status`` and owned by this call. None on success, else the state found.
        ``durable`` for the writes that must survive a power loss (a run becoming pending)."""
        if not self.recorded:
            rec = self._new_record()
            for key, value in fields.items():
                setattr(rec, key, value)
            self.store.insert(rec, durable=durable)
            self.recorded = True
            return None
        if cas:
            done = self.store.update(
                self.run_id,
                expect_status=self.expect_status,
                expect_owner=self.owner,
                durable=durable,
                **fields,
            )
        else:
            done = self.store.update(self.run_id, durable=durable, **fields)
        return None if done else str(self.store.get(self.run_id).status)

    def _kept(self, result: RunResult, found: str | None) -> None:
        """Another writer (``runs cancel``) ended the run first: its state stands."""
        if found is not None:
            result.notes.append(
                f"the run was already {found} when it finished; that state was kept"
            )
            result.status = RunStatus(found)

    def finish(self, result: RunResult, **extra: Any) -> None:
        """Store ``result`` (insert, or compare-and-set from ``running`` by this owner)."""
        if not self.history and result.status.final and not self.recorded:
            return
        if not self.recorded and self.handler_started_at is not None:
            extra.setdefault("started_at", self.handler_started_at)
        self._kept(result, self._write(self._record(result, **extra)))

    def mark_running(self) -> None:
        """Write the ``running`` row before any side effect can happen.

        A run claimed elsewhere (approve, resume, a background worker) already has its owner.
        """
        if self.owner is not None:
            return
        if not self.history:
            self.owner = "local"  # nothing to claim: the run is not recorded
            return
        self.owner = secrets.token_hex(8)
        claim = owner_fields(self.owner, self.timeout + 60.0 if self.timeout else None)
        self._write(
            {"input": self.transcript.get("input"), "started_at": time.time(), **claim}, cas=False
        )

    @property
    def timeout(self) -> float | None:
        if self.opts.timeout is not None:
            return self.opts.timeout
        if self.opts.background or self.spec.background:
            return self.spec.background_timeout or self.spec.timeout
        return self.spec.timeout

    # ------------------------------------------------------------ the steps

    async def run(self, raw_input: Any) -> RunResult:
        """A new call, from raw arguments to the result."""
        try:
            await self._prepare(raw_input)
        except _Failed as exc:
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
            raise _Failed(ErrorCode.INVALID_ARGUMENTS.value, exc.message) from None
        if not isinstance(value, dict):
            raise _Failed(
                ErrorCode.INVALID_ARGUMENTS.value,
                f"arguments must be a JSON object, not {type(value).__name__}",
            )
        if spec.strict and isinstance(spec.input_schema, dict):
            value = _from_strict(spec.input_schema, value)
        self.input = value
        self.phase("input", value, spec.input_schema)
        problems = _problems(spec.input_schema, value)
        if problems:
            shown = jsondata.shorten(redactor_for(spec.input_schema).redact(value))
            raise _Failed(
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
        if isinstance(context, (str, bytes)):
            try:
                context = jsondata.parse(context, what="request context")
            except InvalidJSONError as exc:
                raise _Failed(ErrorCode.INVALID_CONTEXT.value, exc.message) from None
        elif context is not None:
            try:
                jsondata.check(context, what="request context")
            except InvalidJSONError as exc:
                raise _Failed(ErrorCode.INVALID_CONTEXT.value, exc.message) from None
        if schema is not None:
            problems = _problems(schema, {} if context is None else context)
            if problems:
                shown = jsondata.shorten(redactor_for(schema).redact(context))
                raise _Failed(
                    ErrorCode.INVALID_CONTEXT.value,
                    f"Request context validation failed for {self.spec.name}. "
                    f"Provided context: {shown}",
                    problems,
                )
        self.context = context

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

    def approval_request(self) -> ApprovalRequest:
        """What an approver sees: the ``approval`` phase, by default the input's display form."""
        self.phase("approval", self.input, self.spec.input_schema)
        for target, out in (("display", self.display), ("transcript", self.transcript)):
            if "approval" not in self.spec.transform.get(target, {}):
                if "input" in out:
                    out["approval"] = out["input"]
                else:
                    out.pop("approval", None)
        shown = self.display.get("approval")
        return ApprovalRequest(
            run_id=self.run_id,
            tool=self.spec.name,
            display_input=shown,
            tool_digest=self.spec.digest,
            input_hash=jsondata.digest(self.input),
            title=self.spec.title,
            annotations=dict(self.spec.annotations),
        )

    async def _approval(self) -> RunResult | None:
        """None to go on; a result when the run is declined or left awaiting approval."""
        if not self.spec.require_approval:
            return None
        opts = self.opts
        if opts.decline:
            reason = opts.decline if isinstance(opts.decline, str) else None
            return self.declined(reason)
        if opts.approve:
            self.approve_now(opts.approved_by)
            return None
        if opts.approver is not None:
            try:
                answer = await self._maybe(opts.approver(self.approval_request()))
            except Exception as exc:  # no answer: the run waits for toolctl approve/decline
                self.notes.append(
                    redact_text(
                        f"the approver failed ({type(exc).__name__}: "
                        f"{exc}); the run waits for a decision"
                    )
                )
                answer = None
            if answer is True:
                self.approve_now("approver")
                return None
            if answer is False:
                return self.declined(None)
        return self.await_approval()

    def approve_now(self, by: str) -> None:
        self.approval = ApprovalInfo(
            True, by, time.time(), self.spec.digest, jsondata.digest(self.input)
        )

    def approval_dict(self) -> dict[str, Any] | None:
        return self.approval.to_dict() if self.approval else None

    def declined(self, reason: str | None) -> RunResult:
        text = f"The user declined this call of {self.spec.name}"
        info = ToolErrorInfo(ErrorCode.DECLINED.value, f"{text}: {reason}" if reason else text)
        return self.error_result(info, RunStatus.DECLINED)

    def await_approval(self) -> RunResult:
        if "approval" not in self.display:
            self.approval_request()
        info = ToolErrorInfo(
            ErrorCode.APPROVAL_REQUIRED.value,
            f"{self.spec.name} requires approval before it runs; the run "
            f"{self.run_id} is waiting (toolctl approve {self.run_id} or "
            f"toolctl decline {self.run_id})",
        )
        result = self.result(
            RunStatus.AWAITING_APPROVAL,
            error=info,
            ended=False,
            model_output={"type": "text", "value": info.message},
        )
        self._persist_pending(result)
        return result

    def _persist_pending(self, result: RunResult, **extra: Any) -> None:
        fields = self._record(
            result, raw_input=self.input, raw_context=self.context, owner=None, **extra
        )
        fields["error"] = None
        self._kept(result, self._write(fields, durable=True))

    def start_background(self) -> RunResult:
        """Store the run as ``running`` and hand it to a detached worker process."""
        from toolctl.runtime import background

        if not self.history:
            return self.error_result(
                ToolErrorInfo(
                    ErrorCode.HANDLER_ERROR.value,
                    "background runs need the run history (store=False turns it off)",
                )
            )
        token = secrets.token_hex(8)
        self._write(
            {
                "input": self.transcript.get("input"),
                "raw_input": self.input,
                "raw_context": self.context,
                "status": RunStatus.RUNNING.value,
                **owner_fields(token, background.SPAWN_LEASE_S),
            },
            cas=False,
            durable=True,
        )
        self.owner = token
        try:
            background.spawn(self.store, self.run_id, token, self.registry)
        except (OSError, ToolctlError) as exc:
            return self.error_result(
                ToolErrorInfo(
                    ErrorCode.HANDLER_ERROR.value, f"could not start the background worker: {exc}"
                )
            )
        return self.result(RunStatus.RUNNING, ended=False)

    # ------------------------------------------------------------ execution

    async def execute(self, resume_data: Any = None) -> RunResult:
        """Run the handler (again, when resumed) and finish the run."""
        spec = self.spec
        self.resume_data = resume_data
        if spec.handler is None:
            return self.error_result(
                ToolErrorInfo(
                    ErrorCode.NO_HANDLER.value,
                    f"{spec.name} has no handler: it is declared for export only",
                )
            )
        try:
            handler = load_callable(spec.handler, self.python_path)
        except HandlerReferenceError as exc:
            return self.error_result(
                ToolErrorInfo(ErrorCode.HANDLER_NOT_FOUND.value, redact_text(str(exc)))
            )
        deferred = self._defers_running_row()
        if deferred:
            self.handler_started_at = time.time()  # stored with the final row
        else:
            if self.sync:
                self.mark_running()
            else:
                # Cancelled while the row is being written, the run is recorded as cancelled
                # right after it (the writer keeps order): never left running.
                await history.write(self.mark_running, if_cancelled=self.cancelled)
        try:
            output = await self._invoke(handler, deferred)
        except SuspendRequested as sus:
            return await self._suspended(sus.payload)
        except HandlerTimeout as exc:
            if exc.note:
                self.notes.append(exc.note)
            return self.error_result(
                ToolErrorInfo(
                    ErrorCode.TIMEOUT.value, f"{spec.name} did not finish within {exc.timeout:g} s"
                ),
                RunStatus.TIMED_OUT,
            )
        except _Failed as exc:
            return self.error_result(exc.info, exc.status)
        except (KeyboardInterrupt, asyncio.CancelledError) as exc:
            result = self.cancelled()
            if isinstance(exc, KeyboardInterrupt):
                raise RunCancelled(result) from None
            raise
        except Saturated as exc:
            return self.error_result(
                ToolErrorInfo(ErrorCode.HANDLER_ERROR.value, f"executor saturated: {exc}")
            )
        except Exception as exc:
            return self.error_result(self._handler_error(exc))
        except BaseException as exc:  # SystemExit and the like: record, then let it go on
            self.error_result(self._handler_error(exc))
            raise
        return await self._succeeded(output)

    def cancelled(self) -> RunResult:
        """End the run as ``cancelled`` (the abort signal tells the handler)."""
        self.abort.abort("cancelled")
        return self.error_result(
            ToolErrorInfo(ErrorCode.CANCELLED.value, f"{self.spec.name} was cancelled"),
            RunStatus.CANCELLED,
        )

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

    def _defers_running_row(self) -> bool:
        """A quick read-only call is recorded with one write, when it ends.

        The ``running`` row exists so that a side effect never goes unrecorded and a run cut
        short by the death of its process is found (and marked ``interrupted``) by the sweep.
        A tool declared ``readOnlyHint: true`` has no side effect to lose, so on the async path
        (the server) its row is written only when it ends — or, if it is still running after
        ``RUNNING_ROW_GRACE_S``, then, so a long call shows up as running and stays visible to
        the sweep. Everything else writes the ``running`` row before the handler starts.
        """
        return (
            not self.sync
            and self.history
            and self.owner is None
            and not self.recorded
            and self.spec.isolation != "subprocess"
            and self.spec.annotations.get("readOnlyHint") is True
        )

    def _mark_running_late(self) -> None:
        try:
            self.mark_running()
        except Exception:  # the final write will report a broken history; keep the call going
            log.exception("could not record run %s as running", self.run_id)

    async def _invoke(self, handler: Callable[..., Any], deferred: bool = False) -> Any:
        if self.spec.isolation == "subprocess":
            return await self._invoke_isolated()
        if wants_context(handler):  # most handlers take only the input: skip building a context
            args: tuple[Any, ...] = (self.input, self.context_for_handler())
        else:
            args = (self.input,)
        if self.sync:
            return invoke_sync(handler, args, self.timeout, self.abort, f"toolctl:{self.run_id}")
        timer = None
        if deferred:
            loop = asyncio.get_running_loop()
            timer = loop.call_later(RUNNING_ROW_GRACE_S, self._mark_running_late)
        try:
            return await invoke_async(
                handler, args, self.timeout, self.abort, f"toolctl:{self.run_id}"
            )
        finally:
            if timer is not None:
                timer.cancel()

    async def _invoke_isolated(self) -> Any:
        from toolctl.runtime.isolation import run_isolated

        payload = {
            "input": self.input,
            "context": self.context,
            "run_id": self.run_id,
            "tool_name": self.spec.name,
            "timeout": self.timeout,
            "resume_data": self.resume_data,
            "approval": self.approval.to_dict() if self.approval else None,
        }
        assert self.spec.handler is not None

        def work() -> Any:
            return run_isolated(
                self.spec.handler or "", self.python_path, payload, self.timeout, self.abort
            )

        outcome = work() if self.sync else await invoke_async(work, (), None, AbortSignal())
        if outcome.kind == "ok":
            return outcome.value
        if outcome.kind == "suspend":
            raise SuspendRequested(outcome.value)
        if outcome.kind == "timeout":
            self.notes.append("the handler process group was killed at the deadline")
            raise HandlerTimeout(self.timeout or 0.0)
        if outcome.kind == "cancelled":
            raise KeyboardInterrupt
        raise _Failed(
            ErrorCode.HANDLER_ERROR.value,
            redact_text(outcome.message),
        )

    def _check_output(self, output: Any) -> None:
        # Strict dumps rejects NaN/Infinity, non-JSON types and over-long ints; encoding rejects
        # lone surrogates. One pass, and it gives the size.
        try:
            size = len(jsondata.dumps(output).encode("utf-8"))
        except (TypeError, ValueError, RecursionError) as exc:
            message = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise _Failed(
                ErrorCode.INVALID_OUTPUT.value, f"tool output is not valid JSON: {message}"
            ) from None
        if size > MAX_OUTPUT_BYTES:
            raise _Failed(
                ErrorCode.INVALID_OUTPUT.value,
                f"output too large ({size} bytes > limit {MAX_OUTPUT_BYTES})",
            )

    async def _succeeded(self, output: Any) -> RunResult:
        spec = self.spec
        try:
            self._check_output(output)
            schema = spec.output_schema
            if schema is not None and spec.output_validation != "off":
                problems = _problems(schema, output)
                if problems and spec.output_validation == "strict":
                    raise _Failed(
                        ErrorCode.INVALID_OUTPUT.value,
                        f"{spec.name} returned output that does not match its outputSchema",
                        problems,
                    )
                if problems:
                    self.notes.append(
                        "output does not match outputSchema (outputValidation: "
                        "warn): " + "; ".join(f"{p['path']}: {p['message']}" for p in problems)
                    )
                    log.warning("%s: %s", spec.name, self.notes[-1])
        except _Failed as exc:
            return self.error_result(exc.info, exc.status)
        await self.fire("onOutput", output=output)
        try:
            model = transforms.to_model_output(spec.to_model_output, output, self.python_path)
        except (transforms.TransformError, ToolctlError) as exc:
            return self.error_result(
                ToolErrorInfo(ErrorCode.HANDLER_ERROR.value, redact_text(str(exc)))
            )
        out_schema = spec.output_schema if isinstance(spec.output_schema, dict) else None
        self.phase("output", output, out_schema)
        result = self.result(RunStatus.SUCCEEDED, output=output, model_output=model)
        if self.sync:
            self.finish(result)
        else:
            await history.write(lambda: self.finish(result))
        return result

    async def _suspended(self, payload: Any) -> RunResult:
        spec = self.spec
        try:
            jsondata.check(payload, what="suspend payload")
        except InvalidJSONError as exc:
            return self.error_result(ToolErrorInfo(ErrorCode.INVALID_OUTPUT.value, exc.message))
        if spec.suspend_schema is not None:
            problems = _problems(spec.suspend_schema, payload)
            if problems:
                return self.error_result(
                    ToolErrorInfo(
                        ErrorCode.INVALID_OUTPUT.value,
                        f"{spec.name} suspended with a payload that does not match its "
                        "suspendSchema",
                        problems,
                    )
                )
        self.phase("suspend", payload, spec.suspend_schema)
        if self.opts.on_suspend is not None:
            try:
                data = await self._maybe(self.opts.on_suspend(payload, spec.resume_schema))
            except Exception as exc:  # no answer: the run stays suspended for toolctl resume
                self.notes.append(
                    redact_text(
                        f"on_suspend failed ({type(exc).__name__}: {exc}); the run stays suspended"
                    )
                )
                data = None
            if data is not None:
                problem = self.check_resume(data)
                if problem is None:
                    return await self.execute(self.resume_data)
                self.notes.append(f"resume data from on_suspend rejected: {problem.message}")
        result = self.result(
            RunStatus.SUSPENDED,
            suspend_payload=payload,
            ended=False,
            model_output={
                "type": "json",
                "value": {
                    "suspended": True,
                    "runId": self.run_id,
                    "payload": self.display.get("suspend"),
                },
            },
        )
        self._persist_pending(result)
        return result

    def check_resume(self, data: Any) -> ToolErrorInfo | None:
        """Validate resume data (sets ``resume_data``); the problem, or None when fine."""
        try:
            if isinstance(data, (str, bytes)):
                data = jsondata.parse(data, what="resume data")
            else:
                jsondata.check(data, what="resume data")
        except InvalidJSONError as exc:
            return ToolErrorInfo(ErrorCode.INVALID_RESUME.value, exc.message)
        schema = self.spec.resume_schema
        if schema is not None:
            problems = _problems(schema, data)
            if problems:
                return ToolErrorInfo(
                    ErrorCode.INVALID_RESUME.value,
                    f"Resume data for {self.spec.name} does not match its resumeSchema. "
                    f"Provided data: {jsondata.shorten(redactor_for(schema).redact(data))}",
                    problems,
                )
        self.resume_data = data
        self.phase("resume", data, schema)
        return None


def drive(coro: Awaitable[T]) -> T:
    """Run a pipeline coroutine created with ``sync=True`` to completion without a loop."""
    assert inspect.iscoroutine(coro)
    try:
        coro.send(None)
    except StopIteration as done:
        return done.value  # type: ignore[no-any-return]
    coro.close()
    raise RuntimeError("internal error: the synchronous pipeline tried to wait on a loop")


__all__ = ["Call", "Options", "RunCancelled", "drive", "new_run_id"]
