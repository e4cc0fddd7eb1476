"""Continuing pending runs: resume a suspended run, approve or decline one awaiting approval.

Each continuation checks that the stored input and the tool definition are still what was
approved, then claims the run with a durable compare-and-set, so it happens at most once.
"""

from __future__ import annotations

import secrets
from typing import Any

from toolctl.runtime import jsondata
from toolctl.runtime.calls import locator, resolve_store
from toolctl.runtime.errors import RunStateError
from toolctl.runtime.limits import limits_of
from toolctl.runtime.loading import python_path_of
from toolctl.runtime.ownership import owner_fields
from toolctl.runtime.pipeline import Call, Options, drive
from toolctl.runtime.records import RunRecord
from toolctl.runtime.result import ApprovalInfo, RunResult, RunStatus
from toolctl.spec import ToolSpec


def _check_binding(rec: RunRecord, spec: ToolSpec, *, for_resume: bool) -> None:
    """The stored input and the tool definition are still what was approved."""
    if rec.raw_input is None:
        raise RunStateError(f"run {rec.run_id} has no stored input; it cannot continue")
    if jsondata.digest(rec.raw_input) != rec.input_hash:
        raise RunStateError(
            f"the stored input of run {rec.run_id} does not match the hash recorded when it was "
            "requested (input hash mismatch): it was modified, so it will not run",
            hint=f"toolctl runs cancel {rec.run_id}, then run the tool again",
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


def pending_call(registry: Any, rec: RunRecord, store: Any, sync: bool, **options: Any) -> Call:
    spec = registry.get(rec.tool)
    c = Call(
        spec,
        store,
        python_path=python_path_of(registry),
        options=Options(
            run_id=rec.run_id,
            context=rec.raw_context,
            background=rec.background,
            timeout=rec.timeout,
            **options,
        ),
        sync=sync,
        registry=rec.registry or locator(registry),
        limits=limits_of(registry),
    )
    c.input, c.context, c.recorded = rec.raw_input, rec.raw_context, True
    if rec.approval:
        c.approval = ApprovalInfo.from_dict(rec.approval)
    if rec.input_hash is not None and rec.raw_input is not None:
        c.phase("input", rec.raw_input, spec.input_schema)
    return c


def _claim(store: Any, rec: RunRecord, expect: str, **changes: Any) -> str:
    owner = secrets.token_hex(8)
    claim = owner_fields(owner, rec.timeout + 60.0 if rec.timeout else None)
    # Durable: a claim lost to a power loss would let the run be approved or resumed again.
    if not store.update(
        rec.run_id,
        expect_status=expect,
        status=RunStatus.RUNNING.value,
        durable=True,
        **claim,
        **changes,
    ):
        now = store.get(rec.run_id).status
        raise RunStateError(f"run {rec.run_id} was already {_verb(expect)} (status now: {now})")
    return owner


def _verb(expect: str) -> str:
    return "resumed" if expect == RunStatus.SUSPENDED.value else "approved or declined"


async def _resume(
    registry: Any, run_id: str, data: Any, store: Any, sync: bool, options: dict[str, Any]
) -> RunResult:
    st = resolve_store(registry, store)
    rec = st.get(run_id)
    if rec.status != RunStatus.SUSPENDED.value:
        if rec.resume_count:
            raise RunStateError(f"run {rec.run_id} was already resumed (status: {rec.status})")
        raise RunStateError(f"run {rec.run_id} is not suspended (status: {rec.status})")
    spec = registry.get(rec.tool)
    _check_binding(rec, spec, for_resume=True)
    c = pending_call(registry, rec, st, sync, **options)
    problem = c.check_resume(data)
    if problem is not None:
        c.phase("error", problem.to_dict())
        return c.result(
            RunStatus.SUSPENDED,
            error=problem,
            ended=False,
            model_output={"type": "text", "value": problem.text()},
        )
    c.owner = _claim(
        st,
        rec,
        RunStatus.SUSPENDED.value,
        resume_count=rec.resume_count + 1,
        resume=c.transcript.get("resume"),
    )
    if rec.tool_digest != spec.digest:
        c.note("the tool definition changed since this run started")
    return await c.execute(c.resume_data)


def resume(
    registry: Any, run_id: str, data: Any = None, *, store: Any = None, **options: Any
) -> RunResult:
    """Continue a suspended run with ``data`` (validated against ``resumeSchema``).

    At most once: a second (or concurrent) resume raises :class:`RunStateError`. Invalid data
    returns a result with ``error.code == "invalid_resume"`` and leaves the run suspended.
    """
    return drive(_resume(registry, run_id, data, store, True, options))


async def aresume(
    registry: Any, run_id: str, data: Any = None, *, store: Any = None, **options: Any
) -> RunResult:
    """Async :func:`resume`."""
    return await _resume(registry, run_id, data, store, False, options)


async def _approve(
    registry: Any, run_id: str, store: Any, sync: bool, by: str, options: dict[str, Any]
) -> RunResult:
    st = resolve_store(registry, store)
    rec = st.get(run_id)
    spec = registry.get(rec.tool)
    if rec.status == RunStatus.SUSPENDED.value and rec.approval:
        return _reapprove(registry, rec, spec, st, by)
    if rec.status != RunStatus.AWAITING_APPROVAL.value:
        raise RunStateError(f"run {rec.run_id} is not awaiting approval (status: {rec.status})")
    if rec.tool_digest != spec.digest:
        raise RunStateError(
            f"tool definition changed since run {rec.run_id} was requested (hash "
            f"{rec.tool_digest[:12]} → {spec.digest[:12]}); its input was checked against the "
            "old definition",
            hint=f"toolctl decline {rec.run_id}, then run the tool again",
        )
    _check_binding(rec, spec, for_resume=False)
    c = pending_call(registry, rec, st, sync, **options)
    c.approve_now(by)
    if rec.background:
        return _approve_background(c, rec, st)
    c.owner = _claim(st, rec, RunStatus.AWAITING_APPROVAL.value, approval=c.approval_dict())
    return await c.execute()


def _approve_background(c: Call, rec: RunRecord, st: Any) -> RunResult:
    from toolctl.runtime import background

    token = secrets.token_hex(8)
    if not st.update(
        rec.run_id,
        expect_status=RunStatus.AWAITING_APPROVAL.value,
        status=RunStatus.RUNNING.value,
        approval=c.approval_dict(),
        durable=True,
        **owner_fields(token, background.SPAWN_LEASE_S),
    ):
        raise RunStateError(f"run {rec.run_id} was already approved or declined")
    background.spawn(st, rec.run_id, token, c.registry)
    return c.result(RunStatus.RUNNING, ended=False)


def _reapprove(registry: Any, rec: RunRecord, spec: ToolSpec, st: Any, by: str) -> RunResult:
    """Approve a suspended run again after its tool definition changed."""
    approval = rec.approval or {}
    if approval.get("tool_digest") == spec.digest:
        raise RunStateError(
            f"run {rec.run_id} is suspended and its approval is current",
            hint=f"toolctl resume {rec.run_id} --data JSON",
        )
    _check_binding(rec, spec, for_resume=False)
    c = pending_call(registry, rec, st, True)
    c.approve_now(by)
    if not st.update(
        rec.run_id,
        expect_status=RunStatus.SUSPENDED.value,
        approval=c.approval_dict(),
        tool_digest=spec.digest,
        durable=True,
    ):
        raise RunStateError(f"run {rec.run_id} changed state while approving; try again")
    c.note("approved again for the changed tool definition; resume it to continue")
    return c.result(RunStatus.SUSPENDED, ended=False)


def approve(
    registry: Any, run_id: str, *, store: Any = None, by: str = "user", **options: Any
) -> RunResult:
    """Approve a run that is awaiting approval, and run it (or hand it to a worker).

    Refused when the tool definition changed since the run was requested, or the stored input
    no longer matches its hash. Approving a suspended run whose tool changed re-binds the
    approval to the new definition.
    """
    return drive(_approve(registry, run_id, store, True, by, options))


async def aapprove(
    registry: Any, run_id: str, *, store: Any = None, by: str = "user", **options: Any
) -> RunResult:
    """Async :func:`approve`."""
    return await _approve(registry, run_id, store, False, by, options)


def decline(
    registry: Any, run_id: str, reason: str | None = None, *, store: Any = None
) -> RunResult:
    """End a run that is awaiting approval as ``declined`` (the handler never runs)."""
    st = resolve_store(registry, store)
    rec = st.get(run_id)
    if rec.status != RunStatus.AWAITING_APPROVAL.value:
        raise RunStateError(f"run {rec.run_id} is not awaiting approval (status: {rec.status})")
    c = pending_call(registry, rec, st, True)
    c.expect_status = RunStatus.AWAITING_APPROVAL.value
    result = c.declined(reason)
    if result.status is not RunStatus.DECLINED:
        raise RunStateError(
            f"run {rec.run_id} was already approved or declined (status now: {result.status})"
        )
    return result
