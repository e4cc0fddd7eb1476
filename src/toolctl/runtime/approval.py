"""The approval step: ask the approver, or decline, or leave the run awaiting approval."""

from __future__ import annotations

import time

from toolctl.runtime import jsondata
from toolctl.runtime.recording import CallRecording
from toolctl.runtime.result import (
    ApprovalInfo,
    ApprovalRequest,
    ErrorCode,
    RunResult,
    RunStatus,
    ToolErrorInfo,
)


class CallApproval(CallRecording):
    """Approval of one run."""

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
                self.note(
                    f"the approver failed ({type(exc).__name__}: {exc}); "
                    "the run waits for a decision"
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
