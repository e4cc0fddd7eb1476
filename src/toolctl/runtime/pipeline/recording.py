"""Recording a run in the history: the running row, the final row, pending rows, and the
hand-off to a background worker."""

from __future__ import annotations

import secrets
import time
from typing import TYPE_CHECKING, Any, cast

from toolctl.errors import ToolctlError
from toolctl.runtime import jsondata
from toolctl.runtime.errors import DatabaseUnavailableError
from toolctl.runtime.history import binding, heartbeat, ledger
from toolctl.runtime.history import writer as history
from toolctl.runtime.history.ownership import owner_fields
from toolctl.runtime.history.records import RowWrite, RunRecord
from toolctl.runtime.pipeline.state import StepFailed
from toolctl.runtime.redact import hide_values
from toolctl.runtime.result import ErrorCode, RunResult, RunStatus, ToolErrorInfo

if TYPE_CHECKING:
    from toolctl.runtime.history.records import RowChanges, RunStore
    from toolctl.runtime.pipeline.state import RunState
    from toolctl.runtime.pipeline.views import Views


# How long a run's final write to a shared store keeps trying while the database is away.
FINAL_WRITE_PATIENCE_S = 30.0

# The row fields that hold what the run showed: scrubbed of its secret values on the way in.
# (The raw input and context of a pending run, needed to continue it, bound by MAC and removed
# when it ends, are not views: kept as they are.)
_VIEW_FIELDS = frozenset(
    {
        "input",
        "output",
        "error",
        "suspend",
        "resume",
        "notes",
        "model_output",
        "display",
        "traceback",
    }
)


class Recorder:
    """Writes of one run to its store.

    ``recorded``: the row exists; ``owner``: the token this call holds the row with;
    ``expect_status``: the state a compare-and-set update expects.
    """

    __slots__ = (
        "expect_status",
        "handler_started_at",
        "history",
        "locator",
        "owner",
        "recorded",
        "state",
        "store",
        "views",
    )

    def __init__(
        self,
        state: RunState,
        views: Views,
        store: RunStore,
        locator: dict[str, Any] | None,
        *,
        recorded: bool = False,
        owner: str | None = None,
        status: str = RunStatus.RUNNING.value,
    ) -> None:
        self.state = state
        self.views = views
        self.store = store
        self.locator = locator  # how a background worker finds the registry again
        self.history = store.capabilities.history
        self.recorded = recorded
        self.owner = owner
        self.expect_status = status  # the state the stored row is in
        self.handler_started_at: float | None = None  # when no running row recorded it

    async def error_result_async(
        self, info: ToolErrorInfo, status: RunStatus = RunStatus.FAILED
    ) -> RunResult:
        """:meth:`error_result`, with a callable error transform run off the event loop."""
        info = self.state.scrub_error(info)  # as error_result: the transform is user code
        if not self.views.plan.calls_code("error"):
            self.views.phase("error", info.to_dict())
        else:
            try:
                await self.views.aphase("error", info.to_dict())
            except StepFailed:  # no worker free: the views are made in place, as before
                self.views.phase("error", info.to_dict())
        result = self._failed(info, status)
        await self.finish_async(result)  # as a success: through the history writer
        return result

    def error_result(self, info: ToolErrorInfo, status: RunStatus = RunStatus.FAILED) -> RunResult:
        """End the run with ``info``: its views, its row, its result."""
        info = self.state.scrub_error(info)  # what a failure says never quotes a secret
        self.views.phase("error", info.to_dict())
        result = self._failed(info, status)
        self.finish(result)
        return result

    def _failed(self, info: ToolErrorInfo, status: RunStatus) -> RunResult:
        return self.state.result(
            status, error=info, model_output={"type": "text", "value": info.text()}
        )

    def _record(self, result: RunResult, **extra: Any) -> dict[str, Any]:
        transcript = self.state.transcript
        fields: dict[str, Any] = {
            "status": result.status.value,
            "input": transcript.get("input"),
            "output": transcript.get("output"),
            "error": transcript.get("error") if result.error else None,
            "suspend": transcript.get("suspend"),
            "resume": transcript.get("resume"),
            "notes": self.state.notes,
            "model_output": self.views.stored_model_output(result),
            "display": self.views.stored_display(),
            "ended_at": result.ended_at,
            "duration_ms": result.duration_ms,
            "traceback": self.state.traceback,
        }
        if result.status.final:
            fields.update(
                raw_input=None, raw_context=None, raw_resume=None, owner=None, binding=None
            )
        fields.update(extra)
        return fields

    def _new_record(self) -> RunRecord:
        state = self.state
        return RunRecord(
            run_id=state.run_id,
            tool=state.spec.name,
            status=RunStatus.RUNNING.value,
            tool_digest=state.spec.digest,
            created_at=state.started,
            input_hash=jsondata.digest(state.input) if state.input is not None else None,
            background=state.background,
            timeout=state.timeout,
            registry=self.locator,
            approval=state.approval.to_dict() if state.approval else None,
            origin=state.options.origin,
            principal=binding.public_principal(state.options.principal),
        )

    def _write(
        self, fields: dict[str, Any], *, cas: bool = True, durable: bool = False
    ) -> str | None:
        """Insert the run's row, or update it — with ``cas``, only if it is still in
        ``expect_status`` and owned by this call. None on success, else the state found.
        ``durable`` for the writes that must survive a power loss (a run becoming pending)."""
        write = self._row_write(fields, cas=cas, durable=durable)
        return self._written(write, ledger.apply(self.store, write))

    def _row_write(
        self, fields: dict[str, Any], *, cas: bool = True, durable: bool = False
    ) -> RowWrite:
        """:meth:`_write`'s write of ``fields`` (scrubbed of the run's secrets), to be made."""
        fields = self._scrubbed(fields)
        if not self.recorded:
            rec = self._new_record()
            for key, value in fields.items():
                setattr(rec, key, value)
            return ledger.begin_write(rec, durable=durable)
        run_id = self.state.run_id
        row = cast("RowChanges", fields)  # the keys above: all run fields
        if cas:
            status, owner = self.expect_status, self.owner
            return ledger.settle_write(run_id, row, status=status, owner=owner, durable=durable)
        return ledger.record_write(run_id, row, durable=durable)

    def _written(self, write: RowWrite, changed: bool) -> str | None:
        """What :meth:`_write` returns once ``write`` is made (``changed``: its outcome)."""
        if write.record is not None:
            self.recorded = True
            return None
        if write.expect_status is None:  # no compare-and-set: nothing to lose
            return None
        return ledger.settled(self.store, write, changed)

    def _scrubbed(self, fields: dict[str, Any]) -> dict[str, Any]:
        """``fields`` with the run's secret values scrubbed from every stored view: the one
        way into the history."""
        known = self.state.secrets
        if not known:
            return fields
        views = {key: value for key, value in fields.items() if key in _VIEW_FIELDS}
        hidden = hide_values(views, known)  # one search over them all; a copy only if quoted
        return fields if hidden is views else {**fields, **hidden}

    @staticmethod
    def _kept(result: RunResult, found: str | None) -> None:
        """Another writer (``runs cancel``) ended the run first: its state stands. (The same
        state as ``result``'s: this call's own write, sent again after its answer was lost.)"""
        if found is not None and found != result.status.value:
            result.notes.append(
                f"the run was already {found} when it finished; that state was kept"
            )
            result.status = RunStatus(found)

    def finish(self, result: RunResult, **extra: Any) -> None:
        """Store ``result`` (insert, or compare-and-set from ``running`` by this owner); on a
        shared store, waiting out an outage (see :meth:`_write_patiently`)."""
        self._finish(result, extra, patient=True)

    def _finish(self, result: RunResult, extra: dict[str, Any], *, patient: bool) -> None:
        fields = self._final_fields(result, extra)
        if fields is None:
            return
        if patient and self.store.capabilities.shared:
            self._kept(result, self._write_patiently(fields))
        else:
            self._kept(result, self._write(fields))

    def _final_fields(self, result: RunResult, extra: dict[str, Any]) -> dict[str, Any] | None:
        """The final row's fields (None: the run is not recorded)."""
        if self.store.capabilities.shared:  # only a shared store's runs are held
            heartbeat.release(self.state.run_id)
        if not self.history and result.status.final and not self.recorded:
            return None
        if not self.recorded and self.handler_started_at is not None:
            extra.setdefault("started_at", self.handler_started_at)
        return self._record(result, **extra)

    def _staged_finish(self, result: RunResult) -> history.Staged:
        """``_finish(result, {}, patient=False)`` as a staged write: the history writer sends
        it with the other calls' writes (one round trip for them all on PostgreSQL)."""

        def prepare() -> RowWrite | None:
            fields = self._final_fields(result, {})
            return None if fields is None else self._row_write(fields)

        def then(write: RowWrite, changed: bool) -> None:
            self._kept(result, self._written(write, changed))

        return history.Staged(self.store, prepare, then)

    def _write_patiently(self, fields: dict[str, Any]) -> str | None:
        """The final write to a shared store, which a database outage does not lose at once:
        what the handler did is known only to this process. While the database is
        unavailable the write is tried again (:func:`~toolctl.runtime.history.patience.
        while_unavailable`) for up to :data:`FINAL_WRITE_PATIENCE_S` (each attempt waits for
        a connection as any statement does), the run's lease held meanwhile so no sweep takes
        the run as lost; after that the call fails as unavailable, and a daemon thread keeps
        trying the same write while the process lives and the store is open (the lease still
        held), so the run does not stay ``running`` until its process exits (unless
        :data:`~toolctl.runtime.history.patience.MAX_KEPT_TRYING` writes are being tried
        already: then the lease is let go and the run is left to the sweeps)."""
        from toolctl.runtime.history.patience import keep_trying, while_unavailable

        if self.owner is None:  # nothing holds the row yet: nothing to wait for
            return self._write(fields)
        owner, run_id, leases = self.owner, self.state.run_id, self.store.capabilities.leases
        deadline, held = time.monotonic() + FINAL_WRITE_PATIENCE_S, []

        def hold() -> None:
            lease = heartbeat.lease_for(self.store, self.state.timeout)
            heartbeat.hold(self.store, run_id, owner, lease)
            held.append(True)

        def release() -> None:
            if held:
                heartbeat.release(run_id)

        what, handed = f"run {run_id}: its final write", False
        try:
            return while_unavailable(
                lambda: self._write(fields),
                lambda: time.monotonic() >= deadline,
                what=what,
                first_failure=hold,
            )
        except DatabaseUnavailableError:
            closed = (lambda: leases.closed) if leases is not None else (lambda: True)
            trying = keep_trying(lambda: self._write(fields), closed, what=what, then=release)
            handed = trying is not None  # the thread releases the lease when it is done
            raise
        finally:
            if not handed:
                release()

    async def finish_async(self, result: RunResult) -> None:
        """:meth:`finish` through the history writer (off the event loop when it is busy).
        On a shared store the first attempt is made so; if the database is unavailable, the
        patient retries run on a thread of their own, never on the event loop (the write runs
        in place when this call is the loop's only one: a replica's health answers meanwhile)."""
        if not self.history and not self.recorded:
            return
        if not self.store.capabilities.shared:  # (patience is for a shared store only)
            await history.write(self._staged_finish(result), store=self.store)
            return
        try:
            await history.write(self._staged_finish(result), store=self.store)
        except DatabaseUnavailableError:
            from toolctl.runtime.sync import owns_running_loop

            if owns_running_loop():  # the synchronous API's call (maybe loopless): stalls nobody
                self.finish(result)
                return
            import asyncio

            await asyncio.to_thread(self.finish, result)

    async def claim(self, changes: RowChanges) -> None:
        """Take over a pending run (approve, resume): ``running``, owned by this call, with a
        durable compare-and-set from the state it was read in (:func:`ledger.claim`), so it
        happens at most once. The write runs off the event loop."""
        from toolctl.runtime.errors import RunStateError

        owner = secrets.token_hex(8)
        store, run_id = self.store, self.state.run_id
        lease = heartbeat.lease_for(store, self.state.timeout)
        expect = self.expect_status
        done = await ledger.off_loop(
            store, ledger.claim, store, run_id, expect=expect, owner=owner, lease=lease, row=changes
        )
        if not done:
            now = (await ledger.off_loop(store, store.get, run_id)).status
            what = "resumed" if expect == RunStatus.SUSPENDED.value else "approved or declined"
            raise RunStateError(f"run {run_id} was already {what} (status now: {now})")
        self.owner, self.expect_status = owner, RunStatus.RUNNING.value
        heartbeat.hold(store, run_id, owner, lease, self.state.abort)

    def mark_running(self) -> None:
        """Write the ``running`` row before any side effect can happen.

        A run claimed elsewhere (approve, resume, a background worker) already has its owner.
        """
        self.staged_running()()

    def staged_running(self) -> history.Staged:
        """:meth:`mark_running` as a staged write (see :meth:`_staged_finish`)."""

        def prepare() -> RowWrite | None:
            if self.owner is not None:
                return None
            if not self.history:
                self.owner = "local"  # nothing to claim: the run is not recorded
                return None
            self.owner = secrets.token_hex(8)
            lease = heartbeat.lease_for(self.store, self.state.timeout)
            claim = owner_fields(self.owner, lease)
            started = {"input": self.state.transcript.get("input"), "started_at": time.time()}
            return self._row_write({**started, **claim}, cas=False)

        def then(write: RowWrite, changed: bool) -> None:
            self._written(write, changed)
            assert self.owner is not None  # (set by prepare)
            lease = heartbeat.lease_for(self.store, self.state.timeout)  # the same: one per store
            heartbeat.hold(self.store, self.state.run_id, self.owner, lease, self.state.abort)

        return history.Staged(self.store, prepare, then)

    def _bound(self, answers: Any = None) -> dict[str, Any]:
        """The raw data a pending run continues with, and the MAC that binds it; ``answers``:
        those a queued run was given before its handler started (``inputRequests``)."""
        state = self.state
        approval = state.approval.to_dict() if state.approval else None
        mac = binding.sign(
            self.store,
            run_id=state.run_id,
            tool=state.spec.name,
            tool_digest=state.spec.digest,
            input=state.input,
            context=state.context,
            approval=approval,
            timeout=state.timeout,
            background=state.background,
            **binding.origin_bound(state.options.origin),
            **binding.principal_bound(state.options.principal),
            **binding.resume_bound(answers),
        )
        return {
            "raw_input": state.input,
            "raw_context": state.context,
            "raw_resume": answers,
            "binding": mac,
        }

    async def persist_pending(self, result: RunResult) -> None:
        """Store a run entering a pending state (durable), with its raw data bound by MAC. The
        write (an fsync, or a database round trip) runs off the event loop, as a claim does,
        even when this call is the only one running."""
        await ledger.off_loop(self.store, self._persist_pending, result)

    def _persist_pending(self, result: RunResult) -> None:
        if self.store.capabilities.shared:
            heartbeat.release(self.state.run_id)
        fields = self._record(result, owner=None, **self._bound())
        fields["error"] = None
        self._kept(result, self._write(fields, durable=True))

    async def start_background_async(self, answers: Any = None) -> RunResult:
        """:meth:`start_background` off the event loop: its durable write and the enqueue wait
        for the database (a task queue with no connection to be had waits its pool's timeout),
        and a replica's loop must keep serving every other call meanwhile."""
        return await ledger.off_loop(self.store, self.start_background, answers)

    def start_background(self, answers: Any = None) -> RunResult:
        """Store the run as ``running`` and hand it to a detached worker process, with the
        ``answers`` it was given before it was queued (its tool's ``inputRequests``)."""
        from toolctl.runtime.execution import background

        if not self.history:
            return self.error_result(
                ToolErrorInfo(
                    ErrorCode.HANDLER_ERROR.value,
                    "background runs need the run history (store=False turns it off)",
                )
            )
        token = secrets.token_hex(8)
        if self.owner is not None and self.store.capabilities.shared:
            heartbeat.release(self.state.run_id)  # a resumed run: the worker holds it now
        self._write(
            {
                "input": self.state.transcript.get("input"),
                "status": RunStatus.RUNNING.value,
                **self._bound(answers),
                **owner_fields(token, background.SPAWN_LEASE_S),
            },
            cas=False,
            durable=True,
        )
        self.owner = token
        try:
            background.spawn(
                self.store,
                self.state.run_id,
                token,
                self.locator,
                idempotent=bool(self.state.spec.annotations.get("idempotentHint")),
            )
        except (OSError, ToolctlError) as exc:
            return self.error_result(
                ToolErrorInfo(
                    ErrorCode.HANDLER_ERROR.value, f"could not start the background worker: {exc}"
                )
            )
        return self.state.result(RunStatus.RUNNING, ended=False)

    def cancelled(self) -> RunResult:
        """End the run as ``cancelled`` (the abort signal tells the handler)."""
        self.state.abort.abort("cancelled")
        return self.error_result(
            ToolErrorInfo(ErrorCode.CANCELLED.value, f"{self.state.spec.name} was cancelled"),
            RunStatus.CANCELLED,
        )
