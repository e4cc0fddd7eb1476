"""``tools/call``: every call goes through the runtime pipeline (``registry.acall``)."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.jsonrpc import MISSING_REQUIRED_CLIENT_CAPABILITY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolctl.errors import ToolctlError
from toolctl.export.mcpsearch import META_NAMES, SEARCH_TOOLS
from toolctl.runtime.clientask import pending_requests
from toolctl.runtime.errors import DatabaseUnavailableError
from toolctl.runtime.history.records import Origin
from toolctl.runtime.pipeline.call import new_run_id
from toolctl.server.background import wait_for_run
from toolctl.server.drain import Drain
from toolctl.server.identity import caller
from toolctl.server.interaction import (
    Relay,
    client_elicits,
    declared_capabilities,
    make_approver,
    make_on_suspend,
    missing_capability,
)
from toolctl.server.ratelimits import charged
from toolctl.server.results import call_result, error_result, unavailable_message
from toolctl.server.roundtrip import answer_at_once, follow_up, input_required, state_run_id
from toolctl.server.search import search_result, unwrap_call
from toolctl.server.strictwire import RAW_ARGUMENTS_KEY
from toolctl.server.tasks import (
    created,
    declares_extension,
    missing_extension,
    requires_task,
    wants_task,
)
from toolctl.server.telemetry import record_call

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from toolctl.registry import Registry
    from toolctl.runtime import RunResult
    from toolctl.runtime.history.records import RunRecord
    from toolctl.server.clientlog import ClientLog
    from toolctl.server.toolset import ToolSet
    from toolctl.spec import ToolSpec

log = logging.getLogger("toolctl.server")
DISCONNECT_POLL = 0.5
# The request context a caller may send in _meta (every toolctl key is under dev.toolctl/).
CONTEXT_META_KEY = "dev.toolctl/requestContext"


class CallHandler:
    """The low-level server's ``on_call_tool``: looks the tool up in the current snapshot and
    runs it, asking the user through the client where the tool needs it (elicitation in
    2025-11-25, an input-required round trip in 2026-07-28)."""

    def __init__(
        self,
        current: Callable[[], ToolSet],
        client_log: ClientLog,
        *,
        trace_arguments: bool = False,
        drain: Drain | None = None,
    ) -> None:
        self._current = current
        self._client_log = client_log
        self._trace_arguments = trace_arguments
        self._drain = drain or Drain()

    async def __call__(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> dict[str, Any]:
        out = await self._handle(ctx, params)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            out.setdefault("resultType", "complete")  # required in 2026-07-28
        return out

    async def _handle(
        self, ctx: ServerRequestContext[Any, Any], params: types.CallToolRequestParams
    ) -> dict[str, Any]:
        toolset = self._current()  # one snapshot for the whole call
        if toolset.search and params.name in META_NAMES:
            if params.name == SEARCH_TOOLS:
                return await search_result(ctx, toolset, params)
            unwrapped = unwrap_call(ctx, toolset, params)
            if isinstance(unwrapped, dict):  # a call_tool the model got wrong
                return unwrapped
            params = unwrapped  # from here on, exactly a direct call of that tool
        spec = toolset.specs.get(params.name)
        # A tool whose scopes the caller's token lacks is not there for it (over HTTP the
        # transport already answered 403 with the scopes to ask for: this holds elsewhere).
        if spec is None or params.name in toolset.hidden_from(caller(ctx)):
            raise MCPError(code=types.INVALID_PARAMS, message=f"Unknown tool: {params.name}")
        if (
            ctx.protocol_version in MODERN_PROTOCOL_VERSIONS
            and requires_task(spec)
            and not declares_extension(ctx)
        ):
            raise missing_extension(f"the tool {params.name}")
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
        progress = Relay.wanted(ctx)
        log_level = self._client_log.threshold(ctx)
        relay = Relay(ctx, log_level) if progress or log_level is not None else None
        try:
            if relay is None:
                outcome = await self._start(ctx, toolset, spec, params, None)
            else:
                outcome = await self._relayed(ctx, toolset, spec, params, relay)
            if isinstance(outcome, dict):  # a follow-up that could not continue
                return outcome
            result, stored = outcome
        except DatabaseUnavailableError as exc:  # a restart or outage: retrying later works
            log.error("cannot run %s: %s", params.name, exc)
            return error_result(unavailable_message(params.name))
        except ToolctlError as exc:  # the server's setup (e.g. its run history), not the call
            log.error("cannot run %s: %s", params.name, exc)
            return error_result(
                f"toolctl could not run {params.name}: the server is misconfigured "
                "(the server log says how to fix it)."
            )
        except MCPError:
            raise
        except Exception:
            # A bug, not a tool error: details stay in the server log, never reach the client.
            log.exception("internal error while calling %s", params.name)
            return error_result(
                f"toolctl hit an internal error while running {params.name}; "
                "the server log has the details."
            )
        _log_result(result)
        record_call(result, arguments=self._trace_arguments)
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            asked = self._input_required(ctx, result, spec)
            if asked is not None:
                return asked
        return call_result(result, spec, ctx.protocol_version, stored=stored)

    @staticmethod
    def _input_required(
        ctx: ServerRequestContext[Any, Any], result: RunResult, spec: ToolSpec
    ) -> dict[str, Any] | None:
        # The handler's own requests (ctx.ask) go to any client that declared what they need
        # (-32021 otherwise); approval and resume forms to a client that elicits.
        pending = pending_requests(result.suspend_payload) if result.suspend_payload else None
        if pending is not None and result.status.value == "suspended":
            needed = missing_capability(ctx, pending[0])
            if needed is not None:
                raise MCPError(
                    code=MISSING_REQUIRED_CLIENT_CAPABILITY,
                    message=f"the tool {spec.name} asks the client for "
                    f"{', '.join(sorted(needed))}, which this client did not declare "
                    f"(run {result.run_id} stays suspended)",
                    data={"requiredCapabilities": needed},
                )
            return input_required(result, spec)
        return input_required(result, spec) if client_elicits(ctx) else None

    async def _relayed(
        self,
        ctx: ServerRequestContext[Any, Any],
        toolset: ToolSet,
        spec: ToolSpec,
        params: types.CallToolRequestParams,
        relay: Relay,
    ) -> tuple[RunResult, bool] | dict[str, Any]:
        # A follow-up continues the run its (verified) state names; its log lines carry that id.
        run_id = state_run_id(params.request_state) if params.request_state else new_run_id()
        token = self._client_log.attach(run_id, relay)
        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(relay.run)
                try:
                    outcome = await self._start(ctx, toolset, spec, params, relay, run_id)
                finally:
                    relay.close()
        finally:
            self._client_log.detach(run_id, token)
        return outcome

    async def _start(
        self,
        ctx: ServerRequestContext[Any, Any],
        toolset: ToolSet,
        spec: ToolSpec,
        params: types.CallToolRequestParams,
        relay: Relay | None,
        run_id: str | None = None,
    ) -> tuple[RunResult, bool] | dict[str, Any]:
        """The run's result (and whether it was read back from the history)."""
        registry = toolset.registry
        as_task = spec.background and wants_task(ctx, params)
        if params.request_state is not None:  # the follow-up of an input-required round trip
            outcome = await follow_up(ctx, registry, spec, params)
            if isinstance(outcome, dict):
                return outcome
            result = outcome
        else:
            options: dict[str, Any] = {
                "approver": make_approver(ctx, spec),
                "on_suspend": make_on_suspend(ctx, spec),
                "run_id": run_id,
                "origin": Origin.MCP,  # only such runs are this server's to list and act on
                "principal": caller(ctx),  # and only its caller's (server/visibility.py)
                "client_capabilities": declared_capabilities(ctx),
            }
            if charged(ctx.request):  # the HTTP edge took it from the rate limit (429 if not)
                options["rate_charged"] = True
            if relay is not None and Relay.wanted(ctx):
                options["on_progress"] = relay.report
            meta: dict[str, Any] = dict(ctx.meta or {})  # an open map beyond its typed keys
            if CONTEXT_META_KEY in meta:
                options["context"] = meta[CONTEXT_META_KEY]
            # The JSON text the transport kept when the SDK's parser dropped a duplicate key:
            # the runtime refuses it as it refuses `toolctl run --input` (see strictwire).
            raw = meta.get(RAW_ARGUMENTS_KEY)
            arguments: Any = raw if isinstance(raw, str) else (params.arguments or {})
            if as_task:
                options["background"] = True
            result = await registry.acall(params.name, arguments, **options)
            if params.input_responses and result.status.value == "suspended":
                # Answers sent with a first call (no requestState): the ephemeral form of
                # SEP-2322. They answer the handler's own requests; unknown keys are ignored.
                result = await answer_at_once(
                    registry, result, params.input_responses, options["client_capabilities"]
                )
        # Queued, at once or once its questions were answered (approval, inputRequests): the
        # client polls the task.
        if as_task and result.status.value == "running":
            return created(await _record(registry, result.run_id), ctx.protocol_version)
        stored = result.status.value == "running"
        if stored:  # a background tool: its worker finishes it; the result is stored
            result = await wait_for_run(registry, result, ctx, Relay.wanted(ctx), self._drain)
        return result, stored


async def _record(registry: Registry, run_id: str) -> RunRecord:
    from toolctl.runtime.api import resolve_store

    store = resolve_store(registry)
    return await anyio.to_thread.run_sync(store.get, run_id)


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
        if result.traceback:  # for the developer reading the log; never in the MCP result
            log.warning("run %s handler traceback:\n%s", result.run_id, result.traceback.rstrip())
