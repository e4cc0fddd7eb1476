"""``tools/call``: every call goes through the runtime pipeline (``registry.acall``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from toolctl.errors import ToolctlError
from toolctl.server.background import wait_for_run
from toolctl.server.interaction import ProgressRelay, make_approver, make_on_suspend
from toolctl.server.results import call_result, error_result

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from toolctl.runtime import RunResult
    from toolctl.server.toolset import ToolSet
    from toolctl.spec import ToolSpec

log = logging.getLogger("toolctl.server")
DISCONNECT_POLL = 0.5
CONTEXT_META_KEY = "toolctl/requestContext"  # the request context a caller may send in _meta


class CallHandler:
    """The low-level server's ``on_call_tool``: looks the tool up in the current snapshot and
    runs it, asking the user through the client where the tool needs it."""

    def __init__(self, current: Callable[[], ToolSet]) -> None:
        self._current = current

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> dict[str, Any]:
        toolset = self._current()  # one snapshot for the whole call
        spec = toolset.specs.get(params.name)
        if spec is None:
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        probe = getattr(ctx.request, "is_disconnected", None)
        if probe is None:  # stdio: a closed stdin ends the session and cancels its calls
            return await self._run(ctx, toolset, spec, params)
        # Over HTTP the SDK keeps a handler running when its client goes away: watch for it.
        with anyio.CancelScope() as scope:
            watch = DisconnectWatch(probe, scope)
            try:
                return await self._run(ctx, toolset, spec, params)
            finally:
                watch.stop()
        log.warning("the client disconnected: the call of %s was cancelled", params.name)
        return error_result(f"The call of {params.name} was cancelled: the client disconnected.")

    async def _run(
        self,
        ctx: ServerRequestContext[Any, Any],
        toolset: ToolSet,
        spec: ToolSpec,
        params: types.CallToolRequestParams,
    ) -> dict[str, Any]:
        options: dict[str, Any] = {
            "approver": make_approver(ctx, spec),
            "on_suspend": make_on_suspend(ctx, spec),
        }
        meta: dict[str, Any] = dict(ctx.meta or {})  # an open map beyond its typed keys
        if CONTEXT_META_KEY in meta:
            options["context"] = meta[CONTEXT_META_KEY]
        arguments = params.arguments if params.arguments is not None else {}
        progress = ProgressRelay.wanted(ctx)
        try:
            if progress:
                result = await _with_progress(ctx, toolset, params.name, arguments, options)
            else:
                result = await toolset.registry.acall(params.name, arguments, **options)
            if result.status.value == "running":  # a background tool: its worker finishes it
                result = await wait_for_run(toolset.registry, result, ctx, progress)
        except ToolctlError as exc:  # the server's setup (e.g. its run history), not the call
            log.error("cannot run %s: %s", params.name, exc)
            return error_result(
                f"toolctl could not run {params.name}: the server is misconfigured "
                "(the server log says how to fix it)."
            )
        except Exception:
            # A bug, not a tool error: details stay in the server log, never reach the client.
            log.exception("internal error while calling %s", params.name)
            return error_result(
                f"toolctl hit an internal error while running {params.name}; "
                "the server log has the details."
            )
        _log_result(result)
        return call_result(result)


async def _with_progress(
    ctx: ServerRequestContext[Any, Any],
    toolset: ToolSet,
    name: str,
    arguments: Any,
    options: dict[str, Any],
) -> RunResult:
    relay = ProgressRelay(ctx)
    async with anyio.create_task_group() as tg:
        tg.start_soon(relay.run)
        try:
            result: RunResult = await toolset.registry.acall(
                name, arguments, on_progress=relay.report, **options
            )
        finally:
            relay.close()
    return result


class DisconnectWatch:
    """Cancels ``scope`` once the HTTP client has gone away, checked every ``DISCONNECT_POLL``
    seconds while the call runs.

    It starts as a plain event-loop timer, not a task: most calls end before the first check,
    and a task group with a polling task for every call cost about a tenth of the server's CPU
    per call (``bench/bench_http.py``). A check that finds the client still there arms the next.
    The HTTP transport runs on asyncio (uvicorn), so the asyncio loop is the one to use.
    """

    def __init__(self, is_disconnected: Callable[[], Awaitable[bool]], scope: anyio.CancelScope):
        self._is_disconnected = is_disconnected
        self._scope = scope
        self._loop = asyncio.get_running_loop()
        self._check: asyncio.Task[None] | None = None
        self._timer: asyncio.TimerHandle | None = self._loop.call_later(
            DISCONNECT_POLL, self._start_check
        )

    def _start_check(self) -> None:
        self._check = self._loop.create_task(self._probe())

    async def _probe(self) -> None:
        try:
            gone = await self._is_disconnected()
        except Exception:  # the connection is in a state the probe cannot read: stop watching
            log.debug("cannot tell whether the client is still connected", exc_info=True)
            return
        if gone:
            self._scope.cancel()
        elif self._timer is not None:  # not stopped meanwhile
            self._timer = self._loop.call_later(DISCONNECT_POLL, self._start_check)

    def stop(self) -> None:
        """The call is over: no more checks."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if self._check is not None:
            self._check.cancel()


def _log_result(result: RunResult) -> None:
    status = result.status.value
    if result.error is None:
        log.info("run %s %s: %s", result.run_id, result.tool, status)
    else:
        log.warning(
            "run %s %s: %s (%s: %s)",
            result.run_id,
            result.tool,
            status,
            result.error.code,
            result.error.message,
        )
