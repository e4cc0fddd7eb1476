"""``tools/call``: every call goes through the runtime pipeline (``registry.acall``)."""

from __future__ import annotations

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
from toolctl.server.strictwire import RAW_ARGUMENTS_KEY

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
            async with anyio.create_task_group() as tg:
                tg.start_soon(_cancel_on_disconnect, probe, scope)
                result = await self._run(ctx, toolset, spec, params)
                tg.cancel_scope.cancel()
            return result
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
        # The JSON text the transport kept when the SDK's parser dropped a duplicate key: the
        # runtime refuses it as it refuses `toolctl run --input` (see strictwire).
        raw = meta.get(RAW_ARGUMENTS_KEY)
        arguments: Any = raw if isinstance(raw, str) else (params.arguments or {})
        progress = ProgressRelay.wanted(ctx)
        try:
            if progress:
                result = await _with_progress(ctx, toolset, params.name, arguments, options)
            else:
                result = await toolset.registry.acall(params.name, arguments, **options)
            stored = result.status.value == "running"
            if stored:  # a background tool: its worker finishes it; the result is stored
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
        return call_result(result, spec, ctx.protocol_version, stored=stored)


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


async def _cancel_on_disconnect(
    is_disconnected: Callable[[], Awaitable[bool]], scope: anyio.CancelScope
) -> None:
    while not await is_disconnected():
        await anyio.sleep(DISCONNECT_POLL)
    scope.cancel()


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
