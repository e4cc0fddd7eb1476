"""Execution: load the handler, write the running row, invoke it (in process or isolated),
and map what happened to the run's end state."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import Any

from toolctl.errors import HandlerReferenceError
from toolctl.runtime import history
from toolctl.runtime.callstate import RunCancelled, StepFailed, log
from toolctl.runtime.context import AbortSignal, SuspendRequested
from toolctl.runtime.invoke import (
    HandlerTimeout,
    Saturated,
    invoke_async,
    invoke_sync,
    wants_context,
)
from toolctl.runtime.loading import load_callable
from toolctl.runtime.output import CallOutput
from toolctl.runtime.redact import redact_text
from toolctl.runtime.result import ErrorCode, RunResult, RunStatus, ToolErrorInfo

RUNNING_ROW_GRACE_S = 0.05  # a read-only call still running after this gets its running row


class CallExecution(CallOutput):
    """Execution of one run."""

    async def execute(self, resume_data: Any = None) -> RunResult:
        """Run the handler (again, when resumed) and finish the run."""
        self.resume_data = resume_data
        handler = self._load_handler()
        if isinstance(handler, RunResult):
            return handler
        deferred = await self._start_running()
        return await self._run_handler(handler, deferred)

    def _load_handler(self) -> Callable[..., Any] | RunResult:
        """The handler, or the failed result when there is none to run."""
        spec = self.spec
        if spec.handler is None:
            return self.error_result(
                ToolErrorInfo(
                    ErrorCode.NO_HANDLER.value,
                    f"{spec.name} has no handler: it is declared for export only",
                )
            )
        try:
            return load_callable(spec.handler, self.python_path)
        except HandlerReferenceError as exc:
            return self.error_result(
                ToolErrorInfo(ErrorCode.HANDLER_NOT_FOUND.value, redact_text(str(exc)))
            )

    async def _start_running(self) -> bool:
        """Write the running row (or defer it, see below); True when deferred."""
        if self._defers_running_row():
            self.handler_started_at = time.time()  # stored with the final row
            return True
        if self.sync:
            self.mark_running()
        else:
            # Cancelled while the row is being written, the run is recorded as cancelled
            # right after it (the writer keeps order): never left running.
            await history.write(self.mark_running, if_cancelled=self.cancelled)
        return False

    async def _run_handler(self, handler: Callable[..., Any], deferred: bool) -> RunResult:
        """Invoke the handler and map how it ended to the run's end state."""
        try:
            output = await self._invoke(handler, deferred)
        except SuspendRequested as sus:
            result = await self._suspended(sus.payload)
            return result if result is not None else await self.execute(self.resume_data)
        except HandlerTimeout as exc:
            return self._timed_out(exc)
        except StepFailed as exc:
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

    def _timed_out(self, exc: HandlerTimeout) -> RunResult:
        if exc.note:
            self.note(exc.note)
        return self.error_result(
            ToolErrorInfo(
                ErrorCode.TIMEOUT.value,
                f"{self.spec.name} did not finish within {exc.timeout:g} s",
            ),
            RunStatus.TIMED_OUT,
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
            "limits": self.limits.for_child(self.timeout),
        }
        assert self.spec.handler is not None

        def work() -> Any:
            return run_isolated(
                self.spec.handler or "", self.python_path, payload, self.timeout, self.abort
            )

        outcome = work() if self.sync else await invoke_async(work, (), None, AbortSignal())
        for text in outcome.notes:
            self.note(text)
        if outcome.kind == "ok":
            return outcome.value
        if outcome.kind == "suspend":
            raise SuspendRequested(outcome.value)
        if outcome.kind == "timeout":
            self.note("the handler process group was killed at the deadline")
            raise HandlerTimeout(self.timeout or 0.0)
        if outcome.kind == "cancelled":
            raise KeyboardInterrupt
        raise StepFailed(
            ErrorCode.HANDLER_ERROR.value,
            redact_text(outcome.message),
        )
