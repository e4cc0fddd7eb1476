"""Suspend and resume: validate a suspend payload, ask ``on_suspend``, check resume data."""

from __future__ import annotations

import inspect
from typing import TYPE_CHECKING, Any

from toolctl.errors import InvalidJSONError
from toolctl.runtime import clientask, jsondata
from toolctl.runtime.exctext import describe
from toolctl.runtime.execution.invoke import in_task
from toolctl.runtime.pipeline import validation
from toolctl.runtime.pipeline.state import StepFailed
from toolctl.runtime.redact import Redactor, redactor_for
from toolctl.runtime.result import ErrorCode, RunResult, RunStatus, ToolErrorInfo

if TYPE_CHECKING:
    from toolctl.runtime.pipeline.recording import Recorder
    from toolctl.runtime.pipeline.state import RunState
    from toolctl.runtime.pipeline.views import Views


class Suspension:
    """Suspension and resumption of one run."""

    __slots__ = ("recorder", "state", "views")

    def __init__(self, state: RunState, views: Views, recorder: Recorder) -> None:
        self.state = state
        self.views = views
        self.recorder = recorder

    async def suspended(self, payload: Any) -> RunResult | None:
        """The run's result when the handler suspends; None to run it again at once (with
        the ``resume_data`` that ``on_suspend`` gave)."""
        state = self.state
        state.register(payload, state.spec.suspend_schema)
        try:
            problem = await self._check_payload(payload)
        except StepFailed as exc:  # over the call's validation budget, or no worker free
            return await self.recorder.error_result_async(exc.info, exc.status)
        if problem is not None:
            return await self.recorder.error_result_async(problem)
        await self.views.aphase("suspend", payload, state.spec.suspend_schema)
        if await self._resumed_at_once(payload):
            return None
        result = state.result(
            RunStatus.SUSPENDED,
            suspend_payload=payload,
            ended=False,
            model_output={
                "type": "json",
                "value": {
                    "suspended": True,
                    "runId": state.run_id,
                    "payload": state.display.get("suspend"),
                },
            },
        )
        await self.recorder.persist_pending(result)
        return result

    async def _check_payload(self, payload: Any) -> ToolErrorInfo | None:
        """What is wrong with a suspend payload: validated off the event loop, within the
        call's validation budget."""
        spec = self.state.spec
        try:
            jsondata.check(payload, what="suspend payload")
        except InvalidJSONError as exc:
            return ToolErrorInfo(ErrorCode.INVALID_OUTPUT.value, exc.message)
        if spec.suspend_schema is not None:
            problems = await validation.problems(
                self.state,
                spec.suspend_schema,
                payload,
                code=ErrorCode.INVALID_OUTPUT.value,
                what="suspend payload",
            )
            if problems:
                return ToolErrorInfo(
                    ErrorCode.INVALID_OUTPUT.value,
                    f"{spec.name} suspended with a payload that does not match its suspendSchema",
                    problems,
                )
        return None

    async def _resumed_at_once(self, payload: Any) -> bool:
        """Ask ``on_suspend`` for resume data; True when it gave valid data."""
        state = self.state
        on_suspend = state.options.on_suspend
        if on_suspend is None:
            return False
        # The question a user is asked quotes the payload: it gets it redacted (its secret fields)
        # and scrubbed (the run's secret values), never raw.
        shown = state.scrub_json(redactor_for(state.spec.suspend_schema).redact(payload))
        try:
            data = on_suspend(shown, state.spec.resume_schema)
            if inspect.isawaitable(data):
                data = await in_task(data)
        except Exception as exc:  # no answer: the run stays suspended for toolctl resume
            state.note(f"on_suspend failed ({describe(exc)}); the run stays suspended")
            return False
        if data is None:
            return False
        try:
            problem = await self.check_resume(data, payload)
        except StepFailed as exc:
            state.note(f"resume data from on_suspend refused: {exc.info.message}")
            return False
        if problem is None:
            return True
        state.note(f"resume data from on_suspend rejected: {problem.message}")
        return False

    def register_answers(self, data: Any, payload: Any) -> None:
        """Know the secret fields of the answers in ``data`` to the forms ``payload`` asked
        (``writeOnly``/``x-sensitive`` fields, secret-like names) before they are shown."""
        answers = clientask.answers_in(data)
        if answers:
            for key, form in clientask.answer_schemas(payload).items():
                if key in answers:
                    self.state.register(answers[key], form, redactor=Redactor(form))

    async def check_resume(self, data: Any, payload: Any = None) -> ToolErrorInfo | None:
        """Validate resume data (sets ``resume_data``); the problem, or None when fine.
        ``payload`` is the suspend payload it answers: the secret fields of the forms it
        asked (``ctx.ask``/``ctx.elicit``) are registered before the data is shown anywhere.
        Like the input, the data is validated within the call's validation budget and, with
        the resume transforms, off the event loop (:class:`StepFailed` past the budget)."""
        state = self.state
        spec = state.spec
        try:
            if isinstance(data, (str, bytes)):
                data = jsondata.parse(data, what="resume data")
            else:
                jsondata.check(data, what="resume data")
        except InvalidJSONError as exc:
            return ToolErrorInfo(ErrorCode.INVALID_RESUME.value, exc.message)
        schema = spec.resume_schema
        state.register(data, schema)
        self.register_answers(data, payload)
        if schema is not None:
            problems = await validation.problems(
                state, schema, data, code=ErrorCode.INVALID_RESUME.value, what="resume data"
            )
            if problems:
                return ToolErrorInfo(
                    ErrorCode.INVALID_RESUME.value,
                    f"Resume data for {spec.name} does not match its resumeSchema. "
                    f"Provided data: {jsondata.shorten(redactor_for(schema).redact(data))}",
                    problems,
                )
        state.resume_data = data
        await self.views.aphase("resume", data, schema)
        return None
