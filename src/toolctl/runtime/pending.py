"""Continuing pending runs: resume a suspended run, approve or decline one awaiting approval.

Each continuation checks that the stored data is still what was requested (the keyed MAC of
:mod:`toolctl.runtime.history.binding`) and that the tool definition is still what was approved,
then
claims the run with a durable compare-and-set, so it happens at most once. The run continues
through :meth:`Call.continue_pending <toolctl.runtime.pipeline.call.Call.continue_pending>`.
"""

from __future__ import annotations

import dataclasses
import secrets
from typing import TYPE_CHECKING, Any

from toolctl.runtime import clientask, jsondata
from toolctl.runtime.errors import RunStateError
from toolctl.runtime.history import binding, ledger
from toolctl.runtime.options import CallOptions
from toolctl.runtime.options import build as build_options
from toolctl.runtime.pipeline.call import Call
from toolctl.runtime.pipeline.start import resolve_store, site_of
from toolctl.runtime.pipeline.state import StepFailed
from toolctl.runtime.result import RunResult, RunStatus
from toolctl.runtime.sync import run_sync

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from toolctl.runtime.history.records import RowChanges, RunRecord, RunStore
    from toolctl.runtime.options import ContinueKeywords, StoreChoice
    from toolctl.runtime.source import ToolSource
    from toolctl.spec import ToolSpec


def _check_binding(store: RunStore, rec: RunRecord, spec: ToolSpec, *, for_resume: bool) -> None:
    """The stored data and the tool definition are still what was requested and approved."""
    if rec.raw_input is None:
        raise RunStateError(f"run {rec.run_id} has no stored input; it cannot continue")
    retry = f"toolctl runs cancel {rec.run_id}, then run the tool again"
    if jsondata.digest(rec.raw_input) != rec.input_hash:
        raise RunStateError(
            f"the stored input of run {rec.run_id} does not match the hash recorded when it was "
            "requested (input hash mismatch): it was modified, so it will not run",
            hint=retry,
        )
    if not binding.verify(store, rec):
        raise RunStateError(
            f"the stored data of run {rec.run_id} (input, request context, approval or tool "
            "definition) does not match the key-signed binding recorded when it was requested: "
            "it was modified (or the history's key changed, or an older toolctl stored it), so "
            "it will not run",
            hint=retry,
        )
    approval = rec.approval
    if approval and approval.get("input_hash") != rec.input_hash:
        raise RunStateError(
            f"run {rec.run_id}: the approval is for another input (input hash "
            "mismatch); it will not run"
        )
    if for_resume and approval and approval.get("tool_digest") != spec.digest:
        raise RunStateError(
            f"tool definition changed since approval (hash {approval['tool_digest'][:12]} → "
            f"{spec.digest[:12]}); re-approval required",
            hint=f"toolctl approve {rec.run_id}",
        )


class _Continuing:
    """The call a continuation runs, so that Ctrl-C can report it cancelled (sync API)."""

    call: Call | None = None

    def make(
        self, registry: ToolSource, rec: RunRecord, store: RunStore, options: CallOptions
    ) -> Call:
        spec = registry.get(rec.tool)
        self.call = Call.continue_pending(rec, spec, store, site_of(registry), options)
        return self.call

    def cancelled_error(self) -> BaseException:
        return KeyboardInterrupt() if self.call is None else self.call.cancelled_error()


def _pending(registry: ToolSource, rec: RunRecord, store: RunStore, options: CallOptions) -> Call:
    return _Continuing().make(registry, rec, store, options)


async def _load(
    registry: ToolSource, run_id: str, options: CallOptions
) -> tuple[RunStore, RunRecord]:
    """The store and the stored run, read off the event loop (opening a history, reading a
    row: file or database I/O)."""

    def load() -> tuple[RunStore, RunRecord]:
        st = resolve_store(registry, options.store)
        return st, st.get(run_id)

    return await ledger.off_loop(None, load)


async def _resume(
    registry: ToolSource, run_id: str, data: Any, options: CallOptions, box: _Continuing
) -> RunResult:
    st, rec = await _load(registry, run_id, options)
    if rec.status != RunStatus.SUSPENDED.value:
        if rec.resume_count:
            raise RunStateError(f"run {rec.run_id} was already resumed (status: {rec.status})")
        raise RunStateError(f"run {rec.run_id} is not suspended (status: {rec.status})")
    spec = registry.get(rec.tool)
    await ledger.off_loop(st, _check_binding, st, rec, spec, for_resume=True)
    c = box.make(registry, rec, st, options)
    try:
        problem = await c.suspension.check_resume(data, rec.suspend)
    except StepFailed as exc:  # over the validation budget: refused, the run stays suspended
        problem = exc.info
    if problem is not None:
        c.views.phase("error", problem.to_dict())
        return c.state.result(
            RunStatus.SUSPENDED,
            error=problem,
            ended=False,
            model_output={"type": "text", "value": problem.text()},
        )
    resumed = c.state.transcript.get("resume")
    await c.recorder.claim({"resume_count": rec.resume_count + 1, "resume": resumed})
    if rec.tool_digest != spec.digest:
        c.state.note("the tool definition changed since this run started")
    if clientask.before_run(rec.suspend):  # its inputRequests: the handler has not started
        return await c.proceed()
    return await c.execute()


def resume(
    registry: ToolSource,
    run_id: str,
    data: Any = None,
    options: CallOptions | None = None,
    **keywords: Unpack[ContinueKeywords],
) -> RunResult:
    """Continue a suspended run with ``data`` (validated against ``resumeSchema``).

    At most once: a second (or concurrent) resume raises :class:`RunStateError`. Invalid data
    returns a result with ``error.code == "invalid_resume"`` and leaves the run suspended.
    """
    box = _Continuing()
    coro = _resume(registry, run_id, data, build_options(options, keywords), box)
    return run_sync(coro, box.cancelled_error)


async def aresume(
    registry: ToolSource,
    run_id: str,
    data: Any = None,
    options: CallOptions | None = None,
    **keywords: Unpack[ContinueKeywords],
) -> RunResult:
    """Async :func:`resume`."""
    return await _resume(registry, run_id, data, build_options(options, keywords), _Continuing())


async def _approve(
    registry: ToolSource, run_id: str, by: str, options: CallOptions, box: _Continuing
) -> RunResult:
    st, rec = await _load(registry, run_id, options)
    spec = registry.get(rec.tool)
    if rec.status == RunStatus.SUSPENDED.value and rec.approval:
        return await ledger.off_loop(st, _reapprove, registry, rec, spec, st, by)
    if rec.status != RunStatus.AWAITING_APPROVAL.value:
        raise RunStateError(f"run {rec.run_id} is not awaiting approval (status: {rec.status})")
    if rec.tool_digest != spec.digest:
        raise RunStateError(
            f"tool definition changed since run {rec.run_id} was requested (hash "
            f"{rec.tool_digest[:12]} → {spec.digest[:12]}); its input was checked against the "
            "old definition",
            hint=f"toolctl decline {rec.run_id}, then run the tool again",
        )
    await ledger.off_loop(st, _check_binding, st, rec, spec, for_resume=False)
    c = box.make(registry, rec, st, options)
    c.approval.approve(by)
    approval = c.state.approval.to_dict() if c.state.approval else None
    if rec.background and not spec.input_requests:
        return await ledger.off_loop(st, _approve_background, c, rec, st, approval)
    await c.recorder.claim({"approval": approval})
    return await c.proceed()  # asks the tool's inputRequests first, if it declares any


def _approve_background(
    c: Call, rec: RunRecord, st: RunStore, approval: dict[str, Any] | None
) -> RunResult:
    from toolctl.runtime.execution import background

    token = secrets.token_hex(8)
    mac = binding.sign_record(st, dataclasses.replace(rec, approval=approval))
    row: RowChanges = {"binding": mac, "approval": approval}
    if not ledger.approve_to_worker(st, rec.run_id, token, background.SPAWN_LEASE_S, row):
        raise RunStateError(f"run {rec.run_id} was already approved or declined")
    background.spawn(st, rec.run_id, token, c.recorder.locator)
    return c.state.result(RunStatus.RUNNING, ended=False)


def _reapprove(
    registry: ToolSource, rec: RunRecord, spec: ToolSpec, st: RunStore, by: str
) -> RunResult:
    """Approve a suspended run again after its tool definition changed."""
    approval = rec.approval or {}
    if approval.get("tool_digest") == spec.digest:
        raise RunStateError(
            f"run {rec.run_id} is suspended and its approval is current",
            hint=f"toolctl resume {rec.run_id} --data JSON",
        )
    _check_binding(st, rec, spec, for_resume=False)
    c = _pending(registry, rec, st, CallOptions(store=st))
    c.approval.approve(by)
    renewed = c.state.approval.to_dict() if c.state.approval else None
    changed = dataclasses.replace(rec, approval=renewed, tool_digest=spec.digest)
    mac = binding.sign_record(st, changed)
    if not ledger.rebind(st, rec.run_id, binding=mac, approval=renewed, tool_digest=spec.digest):
        raise RunStateError(f"run {rec.run_id} changed state while approving; try again")
    c.state.note("approved again for the changed tool definition; resume it to continue")
    return c.state.result(RunStatus.SUSPENDED, ended=False)


def approve(
    registry: ToolSource,
    run_id: str,
    options: CallOptions | None = None,
    *,
    by: str = "user",
    **keywords: Unpack[ContinueKeywords],
) -> RunResult:
    """Approve a run that is awaiting approval, and run it (or hand it to a worker).

    Refused when the tool definition changed since the run was requested, or the stored data
    no longer matches its key-signed binding. Approving a suspended run whose tool changed
    re-binds the approval to the new definition.
    """
    box = _Continuing()
    coro = _approve(registry, run_id, by, build_options(options, keywords), box)
    return run_sync(coro, box.cancelled_error)


async def aapprove(
    registry: ToolSource,
    run_id: str,
    options: CallOptions | None = None,
    *,
    by: str = "user",
    **keywords: Unpack[ContinueKeywords],
) -> RunResult:
    """Async :func:`approve`."""
    return await _approve(registry, run_id, by, build_options(options, keywords), _Continuing())


def decline(
    registry: ToolSource,
    run_id: str,
    reason: str | None = None,
    *,
    store: StoreChoice = None,
) -> RunResult:
    """End a run that is awaiting approval as ``declined`` (the handler never runs)."""
    st = resolve_store(registry, store)
    rec = st.get(run_id)
    if rec.status != RunStatus.AWAITING_APPROVAL.value:
        raise RunStateError(f"run {rec.run_id} is not awaiting approval (status: {rec.status})")
    c = _pending(registry, rec, st, CallOptions(store=st))
    result = c.approval.declined(reason)
    if result.status is not RunStatus.DECLINED:
        raise RunStateError(
            f"run {rec.run_id} was already approved or declined (status now: {result.status})"
        )
    return result
