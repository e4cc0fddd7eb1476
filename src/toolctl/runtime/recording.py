"""Recording a run in the history: the running row, the final row, pending rows, and the
hand-off to a background worker."""

from __future__ import annotations

import secrets
import time
from typing import Any

from toolctl.errors import ToolctlError
from toolctl.runtime import jsondata
from toolctl.runtime.ownership import owner_fields
from toolctl.runtime.records import RunRecord
from toolctl.runtime.result import ErrorCode, RunResult, RunStatus, ToolErrorInfo
from toolctl.runtime.views import CallViews


class CallRecording(CallViews):
    """Writes of one run to its store."""

    def error_result(self, info: ToolErrorInfo, status: RunStatus = RunStatus.FAILED) -> RunResult:
        self.phase("error", info.to_dict())
        result = self.result(
            status, error=info, model_output={"type": "text", "value": info.text()}
        )
        self.finish(result)
        return result

    def _record(self, result: RunResult, **extra: Any) -> dict[str, Any]:
        fields: dict[str, Any] = {
            "status": result.status.value,
            "input": self.transcript.get("input"),
            "output": self.transcript.get("output"),
            "error": self.transcript.get("error") if result.error else None,
            "suspend": self.transcript.get("suspend"),
            "resume": self.transcript.get("resume"),
            "notes": self.notes,
            "model_output": self._stored_model_output(result),
            "display": self._stored_display(),
            "ended_at": result.ended_at,
            "duration_ms": result.duration_ms,
        }
        if result.status.final:
            fields.update(raw_input=None, raw_context=None, owner=None)
        fields.update(extra)
        return fields

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
            background.spawn(
                self.store,
                self.run_id,
                token,
                self.registry,
                idempotent=bool(self.spec.annotations.get("idempotentHint")),
            )
        except (OSError, ToolctlError) as exc:
            return self.error_result(
                ToolErrorInfo(
                    ErrorCode.HANDLER_ERROR.value, f"could not start the background worker: {exc}"
                )
            )
        return self.result(RunStatus.RUNNING, ended=False)

    def cancelled(self) -> RunResult:
        """End the run as ``cancelled`` (the abort signal tells the handler)."""
        self.abort.abort("cancelled")
        return self.error_result(
            ToolErrorInfo(ErrorCode.CANCELLED.value, f"{self.spec.name} was cancelled"),
            RunStatus.CANCELLED,
        )
