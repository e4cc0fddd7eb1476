"""The approval step: ask the approver, or decline, or leave the run awaiting approval."""

from __future__ import annotations

import inspect
import time
from typing import TYPE_CHECKING, Any

from toolctl.budget import ValidationRefused
from toolctl.runtime import jsondata
from toolctl.runtime.exctext import describe
from toolctl.runtime.execution.invoke import Saturated, in_task, off_loop
from toolctl.runtime.pipeline.plan import validator_for
from toolctl.runtime.result import (
    ApprovalInfo,
    ApprovalRequest,
    ErrorCode,
    RunResult,
    RunStatus,
    ToolErrorInfo,
)

if TYPE_CHECKING:
    from toolctl.runtime.pipeline.recording import Recorder
    from toolctl.runtime.pipeline.state import RunState
    from toolctl.runtime.pipeline.views import Views


def approval_subject(state: RunState) -> dict[str, Any]:
    """What a ``requireApproval: {when: ...}`` schema is matched against: the validated input
    (defaults filled in), the request context, the caller and the tool's annotations. The
    principal is ``{iss, sub, client_id, scopes}`` (scopes sorted) or null for the local
    operator (the CLI and the Python API without one)."""
    principal = state.options.principal
    shown: dict[str, Any] | None = None
    if principal is not None:
        shown = {
            "iss": principal.issuer,
            "sub": principal.subject,
            "client_id": principal.client_id,
            "scopes": sorted(principal.scopes),
        }
    return {
        "input": state.input,
        "context": state.context,
        "principal": shown,
        "annotations": dict(state.spec.annotations),
    }


_UNDECIDED = ("depth", "$ref")  # problems that say "could not tell", not "does not match"


async def approval_needed(state: RunState) -> bool:
    """Whether this call must be approved: ``requireApproval: true``, or a ``when`` schema
    that matches :func:`approval_subject`.

    A condition that cannot be decided (a pattern that cannot be evaluated, the call's
    validation budget used up, nesting too deep, no worker free) asks for approval: a refused
    evaluation must never read as "does not match", or a crafted input would skip approval.
    Like every check of a value, it runs off a shared event loop unless the fast path decides.
    """
    spec = state.spec
    when = spec.approval_when
    if when is None:
        return spec.require_approval
    validator = validator_for(when)
    subject = approval_subject(state)
    if validator.loop_accept(subject):
        return True
    try:
        problems = await off_loop(
            validator.errors, subject, 1, state.budget, name="toolctl-validate"
        )
    except (ValidationRefused, Saturated) as exc:
        state.note(f"requireApproval.when could not be decided ({exc}); approval is required")
        return True
    if problems and problems[0].keyword in _UNDECIDED:
        state.note(
            f"requireApproval.when could not be decided ({problems[0].message}); "
            "approval is required"
        )
        return True
    return not problems


class ApprovalGate:
    """Approval of one run (``requireApproval`` tools)."""

    __slots__ = ("recorder", "state", "views")

    def __init__(self, state: RunState, views: Views, recorder: Recorder) -> None:
        self.state = state
        self.views = views
        self.recorder = recorder

    def request(self) -> ApprovalRequest:
        """What an approver sees: the ``approval`` phase, by default the input's display form."""
        state, spec = self.state, self.state.spec
        self.views.phase("approval", state.input, spec.input_schema)
        return self._request()

    async def arequest(self) -> ApprovalRequest:
        """:meth:`request`, with a callable approval transform run off the event loop."""
        state, spec = self.state, self.state.spec
        await self.views.aphase("approval", state.input, spec.input_schema)
        return self._request()

    def _request(self) -> ApprovalRequest:
        state, spec = self.state, self.state.spec
        for target, out in (("display", state.display), ("transcript", state.transcript)):
            if "approval" not in (spec.transform.get(target) or {}):
                if "input" in out:
                    out["approval"] = out["input"]
                else:
                    out.pop("approval", None)
        return ApprovalRequest(
            run_id=state.run_id,
            tool=spec.name,
            display_input=state.display.get("approval"),
            tool_digest=spec.digest,
            input_hash=jsondata.digest(state.input),
            title=spec.title,
            annotations=dict(spec.annotations),
        )

    async def decide(self) -> RunResult | None:
        """None to go on; a result when the run is declined or left awaiting approval."""
        state = self.state
        opts = state.options
        if opts.decline:
            reason = opts.decline if isinstance(opts.decline, str) else None
            return await self.recorder.error_result_async(
                self._declined(reason), RunStatus.DECLINED
            )
        if opts.approve:
            self.approve("caller")
            return None
        if opts.approver is not None:
            try:
                answer = opts.approver(await self.arequest())
                if inspect.isawaitable(answer):
                    answer = await in_task(answer)
            except Exception as exc:  # no answer: the run waits for toolctl approve/decline
                state.note(f"the approver failed ({describe(exc)}); the run waits for a decision")
                answer = None
            if answer is True:
                self.approve("approver")
                return None
            if answer is False:
                return await self.recorder.error_result_async(
                    self._declined(None), RunStatus.DECLINED
                )
        if "approval" not in state.display:
            await self.arequest()  # what wait() stores: made off the event loop
        return await self.wait()

    def approve(self, by: str) -> None:
        """Approve the run now (bound to the tool definition and the input)."""
        state = self.state
        state.approval = ApprovalInfo(
            True, by, time.time(), state.spec.digest, jsondata.digest(state.input)
        )

    def declined(self, reason: str | None) -> RunResult:
        """End the run as ``declined``."""
        return self.recorder.error_result(self._declined(reason), RunStatus.DECLINED)

    def _declined(self, reason: str | None) -> ToolErrorInfo:
        text = f"The user declined this call of {self.state.spec.name}"
        return ToolErrorInfo(ErrorCode.DECLINED.value, f"{text}: {reason}" if reason else text)

    async def wait(self) -> RunResult:
        """Leave the run awaiting approval (stored durably, its data bound by MAC)."""
        state = self.state
        if "approval" not in state.display:
            self.request()
        run_id, name = state.run_id, state.spec.name
        info = ToolErrorInfo(
            ErrorCode.APPROVAL_REQUIRED.value,
            f"{name} requires approval before it runs; the run {run_id} is waiting "
            f"(toolctl approve {run_id} or toolctl decline {run_id})",
        )
        result = state.result(
            RunStatus.AWAITING_APPROVAL,
            error=info,
            ended=False,
            model_output={"type": "text", "value": info.message},
        )
        await self.recorder.persist_pending(result)
        return result
