"""The Python API of the runtime: call, acall, resume, approve, decline.

``Registry.call``/``acall`` forward here. ``store`` chooses the run history:

* ``None`` (default): the registry's SQLite history (``state`` in toolctl.yaml, by default
  ``.toolctl/state.db`` in the project); a registry without a project keeps runs in memory;
* ``False``: history off. Pending runs (awaiting approval, suspended) are kept in this process;
* a path, or a store object (:class:`~toolctl.runtime.store.SqliteStore`, ``MemoryStore``).
"""

from __future__ import annotations

import secrets
from pathlib import Path
from typing import Any

from toolctl.errors import ToolctlError
from toolctl.runtime import history, jsondata
from toolctl.runtime.errors import RunStateError
from toolctl.runtime.loading import python_path_of
from toolctl.runtime.pipeline import (
    Approver,
    Call,
    OnSuspend,
    Options,
    Progress,
    drive,
)
from toolctl.runtime.result import ApprovalInfo, RunResult, RunStatus
from toolctl.runtime.store import MemoryStore, RunRecord, open_store, owner_fields
from toolctl.spec import ToolSpec

_MEMORY = MemoryStore()
_DEFAULT_STORES: dict[int, tuple[Any, Any]] = {}


def resolve_store(registry: Any, store: Any = None) -> Any:
    """The store object for the ``store`` argument (see the module docstring)."""
    if store is False:
        return _MEMORY
    if store is None or store is True:
        if getattr(registry, "project", None) is None:
            return _MEMORY
        found = _DEFAULT_STORES.get(id(registry))
        if found is None or found[0] is not registry:
            if len(_DEFAULT_STORES) > 256:
                _DEFAULT_STORES.clear()
            found = _DEFAULT_STORES[id(registry)] = (registry, open_store(None, registry))
        return found[1]
    if isinstance(store, (str, Path)):
        return open_store(store)
    return store


_INFO: dict[int, tuple[Any, tuple[str, ...], dict[str, Any] | None]] = {}


def _info(registry: Any) -> tuple[tuple[str, ...], dict[str, Any] | None]:
    """The registry's python path and locator, computed once per registry (path resolution
    costs more than the rest of a call)."""
    found = _INFO.get(id(registry))
    if found is None or found[0] is not registry:
        if len(_INFO) > 256:
            _INFO.clear()
        found = _INFO[id(registry)] = (registry, python_path_of(registry), locator(registry))
    return found[1], found[2]


def locator(registry: Any) -> dict[str, Any] | None:
    """How a background worker finds this registry again: project root and tool paths."""
    project = getattr(registry, "project", None)
    if project is None:
        return None
    return {
        "root": str(Path(project.root).resolve()),
        "tools": [str(Path(p).resolve()) for p in project.tool_paths],
    }


def _spec(registry: Any, name: str) -> ToolSpec:
    spec: ToolSpec = registry.get(name)
    if not spec.enabled:
        raise ToolctlError(
            f"tool {name!r} is disabled (enabled: false in {spec.location})",
            hint="set enabled: true to run it",
        )
    return spec


def _new_call(registry: Any, name: str, store: Any, sync: bool, **options: Any) -> Call:
    spec = _spec(registry, name)
    python_path, where = _info(registry)
    return Call(
        spec,
        resolve_store(registry, store),
        python_path=python_path,
        options=Options(**options),
        sync=sync,
        registry=where,
    )


def call(
    registry: Any,
    name: str,
    input: Any = None,
    *,
    context: Any = None,
    approve: bool | None = None,
    decline: bool | str | None = None,
    timeout: float | None = None,
    background: bool = False,
    store: Any = None,
    approver: Approver | None = None,
    on_suspend: OnSuspend | None = None,
    on_progress: Progress | None = None,
    run_id: str | None = None,
) -> RunResult:
    """Run tool ``name`` with ``input`` (a dict or a JSON string) and return its result.

    Never raises for a tool problem (bad arguments, handler error, timeout): the result carries
    ``status`` and ``error``. Raises :class:`~toolctl.errors.ToolctlError` for caller mistakes
    (unknown tool, unusable history) and :class:`RunCancelled` on Ctrl-C.
    """
    c = _new_call(
        registry,
        name,
        store,
        True,
        context=context,
        approve=approve,
        decline=decline,
        timeout=timeout,
        background=background,
        approver=approver,
        on_suspend=on_suspend,
        on_progress=on_progress,
        run_id=run_id,
    )
    return drive(c.run(input))


async def acall(
    registry: Any,
    name: str,
    input: Any = None,
    *,
    context: Any = None,
    approve: bool | None = None,
    decline: bool | str | None = None,
    timeout: float | None = None,
    background: bool = False,
    store: Any = None,
    approver: Approver | None = None,
    on_suspend: OnSuspend | None = None,
    on_progress: Progress | None = None,
    run_id: str | None = None,
) -> RunResult:
    """Async :func:`call`: sync handlers run in a thread, so the event loop stays free."""
    c = _new_call(
        registry,
        name,
        store,
        False,
        context=context,
        approve=approve,
        decline=decline,
        timeout=timeout,
        background=background,
        approver=approver,
        on_suspend=on_suspend,
        on_progress=on_progress,
        run_id=run_id,
    )
    with history.active():
        return await c.run(input)


# ---------------------------------------------------------------- pending runs


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


def _pending_call(registry: Any, rec: RunRecord, store: Any, sync: bool, **options: Any) -> Call:
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
    c = _pending_call(registry, rec, st, sync, **options)
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
        c.notes.append("the tool definition changed since this run started")
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
    c = _pending_call(registry, rec, st, sync, **options)
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
    c = _pending_call(registry, rec, st, True)
    c.approve_now(by)
    if not st.update(
        rec.run_id,
        expect_status=RunStatus.SUSPENDED.value,
        approval=c.approval_dict(),
        tool_digest=spec.digest,
        durable=True,
    ):
        raise RunStateError(f"run {rec.run_id} changed state while approving; try again")
    c.notes.append("approved again for the changed tool definition; resume it to continue")
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
    c = _pending_call(registry, rec, st, True)
    c.expect_status = RunStatus.AWAITING_APPROVAL.value
    result = c.declined(reason)
    if result.status is not RunStatus.DECLINED:
        raise RunStateError(
            f"run {rec.run_id} was already approved or declined (status now: {result.status})"
        )
    return result


# ---------------------------------------------------------------- reading runs back


def get_run(registry: Any, run_id: str, *, store: Any = None) -> RunResult:
    """The recorded run ``run_id`` (or a unique prefix) as a :class:`RunResult`, as it is now.

    See :func:`toolctl.runtime.runs.to_result` for what a stored result holds.
    """
    from toolctl.runtime import runs

    return runs.to_result(resolve_store(registry, store).get(run_id))


def wait(
    registry: Any, run_id: str, timeout: float | None = None, *, store: Any = None
) -> RunResult:
    """Wait until run ``run_id`` is no longer running (a background run: until its worker ends
    it) and return its result; :class:`TimeoutError` after ``timeout`` seconds."""
    from toolctl.runtime import runs

    return runs.to_result(runs.wait(resolve_store(registry, store), run_id, timeout))
