"""Background tools as MCP tasks, mapped onto background runs (the task id is the run id).

* 2026-07-28, the ``io.modelcontextprotocol/tasks`` extension: a ``tools/call`` of a background
  tool from a client that declares the extension in the request answers at once with a
  ``CreateTaskResult`` (``resultType: "task"``); ``tasks/get`` polls (the final ``CallToolResult``
  inlined once completed), ``tasks/update`` answers a paused run's input requests (approval,
  resume data), ``tasks/cancel`` cancels.
* 2025-11-25, core tasks: a ``tools/call`` with ``params.task`` runs in the background and answers
  ``{"task": ...}``; ``tasks/get``, ``tasks/result`` (waits for the end), ``tasks/list`` (the
  background runs) and ``tasks/cancel``.

The run store is the task store, so any replica sharing it answers for any task. A task result
goes through the same contract as any call result (``call_result``): it honours ``outputSchema``.
Task ids are run ids; a task is bound to the principal that created it (with OAuth): every
handler treats another principal's task as one that does not exist (server/visibility.py).
"""

from __future__ import annotations

import datetime as dt
from typing import TYPE_CHECKING, Any, NoReturn

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import HEADER_MISMATCH, MISSING_REQUIRED_CLIENT_CAPABILITY
from pydantic import ConfigDict

from toolctl.runtime.result import RunStatus
from toolctl.server.identity import caller
from toolctl.server.results import call_result
from toolctl.server.roundtrip import answer, input_required, questions
from toolctl.server.toolset import MODERN
from toolctl.server.visibility import visible_over_mcp

if TYPE_CHECKING:
    from collections.abc import Callable

    from mcp.server.context import ServerRequestContext
    from mcp.server.lowlevel import Server

    from toolctl.runtime.history.records import RunRecord
    from toolctl.server.toolset import ToolSet
    from toolctl.spec import ToolSpec

EXTENSION = "io.modelcontextprotocol/tasks"
RELATED_TASK = "io.modelcontextprotocol/related-task"
POLL_MS = 500  # the interval clients are told to poll at
# tasks/result waits for a run's end checking the history at this interval, doubling up to
# POLL_MS: a run that ends within moments is answered within moments, not half a second later.
FIRST_CHECK_S = 0.01


def task_status(status: RunStatus) -> str:
    """The MCP task status of a run status. Every status is named: mypy refuses a new one
    that is not (``_unnamed``)."""
    match status:
        case RunStatus.RUNNING:
            return "working"
        case RunStatus.AWAITING_APPROVAL | RunStatus.SUSPENDED:
            return "input_required"
        case RunStatus.SUCCEEDED | RunStatus.FAILED | RunStatus.DECLINED | RunStatus.TIMED_OUT:
            return "completed"  # the run has a call result (an error result included)
        case RunStatus.CANCELLED:
            return "cancelled"
        case RunStatus.INTERRUPTED:
            return "failed"  # no result to give
        case _:
            _unnamed(status)


def _unnamed(status: NoReturn) -> NoReturn:
    raise AssertionError(f"no task status for the run status {status!r}")


_TASK_STATUS = {status.value: task_status(status) for status in RunStatus}


class TaskParams(types.RequestParams):
    """``{"taskId": ...}`` (and, for ``tasks/update``, ``inputResponses``)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True)
    taskId: str
    inputResponses: dict[str, Any] | None = None


class ListParams(types.RequestParams):
    """``tasks/list`` (2025-11-25): an optional cursor."""

    model_config = ConfigDict(extra="allow")
    cursor: str | None = None


def declares_extension(ctx: ServerRequestContext[Any, Any]) -> bool:
    """True when the (2026-07-28) request's client declared the tasks extension."""
    caps = ctx.session.client_capabilities
    extensions = getattr(caps, "extensions", None) or {}
    return EXTENSION in extensions


def wants_task(ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams) -> bool:
    """True when this call should answer with a task handle instead of waiting (for a
    background tool only: a task-augmented call of any other tool runs and answers at once)."""
    if ctx.protocol_version == MODERN:
        return declares_extension(ctx)
    return params.task is not None


def missing_extension(what: str) -> MCPError:
    """The -32021 error for a request that needs the tasks extension the client did not
    declare (its data names the capability, as the revision defines)."""
    return MCPError(
        code=MISSING_REQUIRED_CLIENT_CAPABILITY,
        message=f"{what} needs the {EXTENSION} extension: declare it in the request's "
        "client capabilities",
        data={"requiredCapabilities": {"extensions": {EXTENSION: {}}}},
    )


def requires_task(spec: ToolSpec) -> bool:
    """True when the tool declares ``providerOptions.mcp.execution.taskSupport: required``."""
    mcp = spec.provider_options.get("mcp")
    execution = mcp.get("execution") if isinstance(mcp, dict) else None
    return isinstance(execution, dict) and execution.get("taskSupport") == "required"


def _check_request(ctx: ServerRequestContext[Any, Any], task_id: str | None) -> None:
    """Refuse a 2026-07-28 ``tasks/*`` request the extension does not allow: from a client that
    did not declare it (-32021), or whose ``Mcp-Name`` header names another task (-32020)."""
    if ctx.protocol_version != MODERN:
        return
    if not declares_extension(ctx):
        raise missing_extension("tasks/*")
    headers = getattr(ctx.request, "headers", None)
    named = headers.get("mcp-name") if headers is not None else None
    if named is not None and task_id is not None and named.strip() != task_id:
        raise MCPError(
            code=HEADER_MISMATCH,
            message="Mcp-Name header does not match the request body's 'taskId' parameter",
        )


def _removed(ctx: ServerRequestContext[Any, Any], method: str) -> None:
    # tasks/result and tasks/list exist in 2025-11-25 core tasks only: the 2026-07-28
    # extension inlines the result in tasks/get and has no listing.
    if ctx.protocol_version == MODERN:
        raise MCPError(code=types.METHOD_NOT_FOUND, message=f"Method not found: {method}")


def created(record: RunRecord, protocol: str) -> dict[str, Any]:
    """The ``CreateTaskResult`` for a run just handed to its worker."""
    task = _task(record, "working", protocol)
    if protocol == MODERN:
        return {"resultType": "task", **task}
    return {"task": task, "_meta": {RELATED_TASK: {"taskId": record.run_id}}}


class Tasks:
    """The ``tasks/*`` handlers over the current tool set's run store."""

    def __init__(self, current: Callable[[], ToolSet]) -> None:
        self._current = current

    def register(self, server: Server[Any]) -> None:
        """Add the handlers to ``server`` and advertise the extension."""
        server.add_request_handler("tasks/get", TaskParams, self.get)
        server.add_request_handler("tasks/update", TaskParams, self.update)
        server.add_request_handler("tasks/cancel", TaskParams, self.cancel)
        server.add_request_handler("tasks/result", TaskParams, self.result)
        server.add_request_handler("tasks/list", ListParams, self.list)
        server.extensions[EXTENSION] = {}

    async def _record(self, ctx: ServerRequestContext[Any, Any], task_id: str) -> RunRecord:
        from toolctl.errors import ToolctlError
        from toolctl.runtime.api import resolve_store

        store = resolve_store(self._current().registry)
        try:
            record: RunRecord = await anyio.to_thread.run_sync(store.get, task_id)
        except ToolctlError:
            record = None  # type: ignore[assignment]
        if record is None or not record.background or not visible_over_mcp(record, caller(ctx)):
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"Failed to retrieve task: {task_id} not found"
            )
        return record

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        """``tasks/get``: the task's state (with its result once it ended, in 2026-07-28)."""
        _check_request(ctx, params.taskId)
        record = await self._record(ctx, params.taskId)
        if record.status == RunStatus.RUNNING.value:
            # A worker that died mid-run leaves its run "running": the poll is what notices
            # (the task then reads "failed", a protocol-level error, not a tool result).
            record = await anyio.to_thread.run_sync(_unless_lost, _store(self._current()), record)
        return self._detailed(record, ctx.protocol_version)

    async def update(
        self, ctx: ServerRequestContext[Any, Any], params: TaskParams
    ) -> dict[str, Any]:
        """``tasks/update`` (2026-07-28): answers to a paused run's input requests."""
        _check_request(ctx, params.taskId)
        record = await self._record(ctx, params.taskId)
        toolset = self._current()
        spec = toolset.specs.get(record.tool)
        if _status(record) != "input_required" or spec is None:
            return {}
        from toolctl.runtime.history.runs import to_result

        asked = questions(to_result(record), spec)
        given = params.inputResponses or {}
        # Only answers to what the run asks; the ones given earlier go with them (a partial
        # answer resumes the run, which asks again for what is still missing).
        responses = {k: v for k, v in given.items() if asked is not None and k in asked[0]}
        if asked is not None and responses:
            answers = {**asked[1], **responses}
            await answer(toolset.registry, spec, record, answers)
        return {}

    async def cancel(
        self, ctx: ServerRequestContext[Any, Any], params: TaskParams
    ) -> dict[str, Any]:
        """``tasks/cancel``: cancel the run (a no-op once it ended)."""
        from toolctl.runtime.errors import RunStateError
        from toolctl.runtime.history.runs import cancel

        _check_request(ctx, params.taskId)
        record = await self._record(ctx, params.taskId)
        store = _store(self._current())
        try:
            record = await anyio.to_thread.run_sync(cancel, store, record.run_id)
        except RunStateError as exc:
            if ctx.protocol_version != MODERN:
                raise MCPError(code=types.INVALID_PARAMS, message=exc.message) from None
        protocol = ctx.protocol_version
        return {} if protocol == MODERN else _task(record, _status(record), protocol)

    async def result(
        self, ctx: ServerRequestContext[Any, Any], params: TaskParams
    ) -> dict[str, Any]:
        """``tasks/result`` (2025-11-25): the call result, once the run ended."""
        _removed(ctx, "tasks/result")
        record = await self._record(ctx, params.taskId)
        store = _store(self._current())
        wait = FIRST_CHECK_S
        while _status(record) == "working":
            await anyio.sleep(wait)
            wait = min(wait * 2, POLL_MS / 1000)
            record = await anyio.to_thread.run_sync(store.get, record.run_id)
        out = self._call_result(record, ctx.protocol_version)
        out["_meta"] = {**out.get("_meta", {}), RELATED_TASK: {"taskId": record.run_id}}
        return out

    async def list(self, ctx: ServerRequestContext[Any, Any], params: ListParams) -> dict[str, Any]:
        """``tasks/list`` (2025-11-25): the latest background runs."""
        _removed(ctx, "tasks/list")
        store = _store(self._current())
        who = caller(ctx)
        sub = who.subject if who is not None else None
        records = await anyio.to_thread.run_sync(lambda: store.query(limit=200, principal=sub))
        tasks = [
            _task(r, _status(r), ctx.protocol_version)
            for r in records
            if r.background and visible_over_mcp(r, who)
        ]
        return {"tasks": tasks}

    def _call_result(self, record: RunRecord, protocol: str) -> dict[str, Any]:
        from toolctl.runtime.history.runs import to_result

        spec = self._current().specs.get(record.tool)
        if spec is None:
            raise MCPError(
                code=types.INVALID_PARAMS, message=f"the tool {record.tool} is no longer served"
            )
        return call_result(to_result(record), spec, protocol, stored=True)

    def _detailed(self, record: RunRecord, protocol: str) -> dict[str, Any]:
        status = _status(record)
        task = _task(record, status, protocol)
        if protocol != MODERN:
            return task
        if status == "completed":
            # Inlined, it carries no related-task _meta (the extension forbids it there).
            result = self._call_result(record, protocol)
            task["result"] = {"resultType": "complete", **result}
        elif status == "failed":
            task["error"] = {"code": types.INTERNAL_ERROR, "message": task["statusMessage"]}
        elif status == "input_required":
            from toolctl.runtime.history.runs import to_result

            spec = self._current().specs.get(record.tool)
            asked = input_required(to_result(record), spec) if spec is not None else None
            if asked is None:  # a form cannot ask it: report how to continue instead
                task.update(status="completed", result=self._call_result(record, protocol))
            else:
                task["inputRequests"] = asked["inputRequests"]
        return task


def _store(toolset: ToolSet) -> Any:
    from toolctl.runtime.api import resolve_store

    return resolve_store(toolset.registry)


def _unless_lost(store: Any, record: RunRecord) -> RunRecord:
    """``record``, or once its owner has died, the record the sweep left (``interrupted``)."""
    import time

    from toolctl.runtime.history.ownership import owner_alive

    if owner_alive(record, time.time()):
        return record
    store.sweep()
    swept: RunRecord = store.get(record.run_id)
    return swept


def _status(record: RunRecord) -> str:
    return _TASK_STATUS.get(record.status, "failed")  # a status this release does not know


def _iso(stamp: float | None) -> str:
    moment = dt.datetime.fromtimestamp(stamp or 0.0, tz=dt.timezone.utc)
    return moment.isoformat().replace("+00:00", "Z")


def _task(record: RunRecord, status: str, protocol: str) -> dict[str, Any]:
    updated = record.ended_at or record.started_at or record.created_at
    # The same fields, named per revision (the 2026-07-28 extension adds the unit).
    ttl, poll = ("ttlMs", "pollIntervalMs") if protocol == MODERN else ("ttl", "pollInterval")
    task: dict[str, Any] = {
        "taskId": record.run_id,
        "status": status,
        "statusMessage": f"run {record.run_id} of {record.tool}: {record.status}",
        "createdAt": _iso(record.created_at),
        "lastUpdatedAt": _iso(updated),
        ttl: None,
        poll: POLL_MS,
    }
    if status == "failed":
        task["statusMessage"] = f"run {record.run_id} was {record.status}"
    return task
