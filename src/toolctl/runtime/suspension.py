"""Suspend and resume: validate a suspend payload, ask ``on_suspend``, check resume data."""

from __future__ import annotations

from typing import Any

from toolctl.errors import InvalidJSONError
from toolctl.runtime import jsondata
from toolctl.runtime.approval import CallApproval
from toolctl.runtime.callstate import schema_problems
from toolctl.runtime.redact import redactor_for
from toolctl.runtime.result import ErrorCode, RunResult, RunStatus, ToolErrorInfo


class CallSuspension(CallApproval):
    """Suspension of one run."""

    async def _suspended(self, payload: Any) -> RunResult | None:
        """The run's result when the handler suspends; None to run it again at once (with
        the ``resume_data`` that ``on_suspend`` gave)."""
        problem = self._check_suspend_payload(payload)
        if problem is not None:
            return self.error_result(problem)
        self.phase("suspend", payload, self.spec.suspend_schema)
        if await self._resumed_at_once(payload):
            return None
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

    def _check_suspend_payload(self, payload: Any) -> ToolErrorInfo | None:
        try:
            jsondata.check(payload, what="suspend payload")
        except InvalidJSONError as exc:
            return ToolErrorInfo(ErrorCode.INVALID_OUTPUT.value, exc.message)
        if self.spec.suspend_schema is not None:
            problems = schema_problems(self.spec.suspend_schema, payload)
            if problems:
                return ToolErrorInfo(
                    ErrorCode.INVALID_OUTPUT.value,
                    f"{self.spec.name} suspended with a payload that does not match its "
                    "suspendSchema",
                    problems,
                )
        return None

    async def _resumed_at_once(self, payload: Any) -> bool:
        """Ask ``on_suspend`` for resume data; True when it gave valid data."""
        if self.opts.on_suspend is None:
            return False
        try:
            data = await self._maybe(self.opts.on_suspend(payload, self.spec.resume_schema))
        except Exception as exc:  # no answer: the run stays suspended for toolctl resume
            self.note(f"on_suspend failed ({type(exc).__name__}: {exc}); the run stays suspended")
            return False
        if data is None:
            return False
        problem = self.check_resume(data)
        if problem is None:
            return True
        self.note(f"resume data from on_suspend rejected: {problem.message}")
        return False

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
            problems = schema_problems(schema, data)
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
