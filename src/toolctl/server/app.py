"""The MCP server object: a low-level SDK ``Server`` over a swappable :class:`ToolSet`.

The low-level server fits a registry whose schemas come from YAML (no function signatures to
introspect) and is several times cheaper per call than the SDK's high-level ``MCPServer``.

Two protocol revisions are served side by side, chosen by each client: 2026-07-28 (the default
for a client that offers it: ``server/discover``, no ``initialize``, every request carrying its
own envelope) and 2025-11-25 (the ``initialize`` handshake; elicitation and
``notifications/tools/list_changed`` exist only there). Each revision has its own ``tools/list``
result, built and serialized once per snapshot, on its first ``tools/list``.
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.server.request_state import RequestStateBoundary, RequestStateSecurity
from mcp_types.methods import serialize_server_result

from toolctl import __version__
from toolctl.server.calls import CallHandler
from toolctl.server.clientlog import ClientLog
from toolctl.server.drain import Drain
from toolctl.server.identity import caller
from toolctl.server.roundtrip import STATE_TTL, state_keys
from toolctl.server.tasks import Tasks
from toolctl.server.telemetry import ConnectionAttributes
from toolctl.server.toolset import MODERN

if TYPE_CHECKING:
    from mcp.server.connection import Connection
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

    from toolctl.server.toolset import ToolSet

log = logging.getLogger("toolctl.server")
NOTIFY_TIMEOUT = 1.0
PROTOCOL_VERSION = "2025-11-25"  # the handshake revision (the mcp export's default)
PROTOCOL_VERSIONS = (MODERN, PROTOCOL_VERSION)  # newest first


class ToolServer:
    """Serves one :class:`ToolSet` at a time; :meth:`swap` replaces it atomically."""

    def __init__(
        self,
        toolset: ToolSet,
        *,
        name: str = "toolctl",
        reload: bool = False,
        forward_logging: bool = False,
        trace_arguments: bool = False,
    ) -> None:
        self.reload = reload
        self._toolset = toolset
        self._wire: dict[str, dict[str, Any]] = {}  # per revision, for this snapshot
        # per revision and set of tools hidden from the caller (tool scopes), likewise
        self._scoped: dict[tuple[str, frozenset[str]], dict[str, Any]] = {}
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        self.client_log = ClientLog(forward_python_logging=forward_logging)
        self.lowlevel: Server[Any] = Server(
            name, version=__version__, get_tool_input_schema=self._input_schema
        )
        # Registered by method so the handlers may return prebuilt wire dicts.
        low = self.lowlevel
        low.add_request_handler("tools/list", types.PaginatedRequestParams, self._list_tools)
        self.drain = Drain()  # set by the HTTP front on SIGTERM (toolctl.server.drain)
        self._calls = CallHandler(
            lambda: self._toolset,
            self.client_log,
            trace_arguments=trace_arguments,
            drain=self.drain,
        )
        low.add_request_handler("tools/call", types.CallToolRequestParams, self._calls)
        Tasks(lambda: self._toolset).register(low)
        # 2025-11-25 only (2026-07-28 clients choose a level per request in _meta).
        low.add_request_handler(
            "logging/setLevel", types.SetLevelRequestParams, self.client_log.set_level
        )
        self._stamp = {types.SERVER_INFO_META_KEY: low.server_info_stamp}
        # After the SDK's OpenTelemetry middleware (first in the list), so that every request,
        # tools/list included, is a span; the connection's attributes go on it first.
        self.connection_attributes = ConnectionAttributes()
        low.middleware.insert(1, self._route)
        # Seals and verifies the requestState of input-required round trips (2026-07-28).
        security = RequestStateSecurity(keys=state_keys(toolset.registry), ttl=STATE_TTL)
        low.middleware.append(RequestStateBoundary(security, default_audience=name))
        if reload:
            self.lowlevel.middleware.append(self._track_connection)

    @property
    def toolset(self) -> ToolSet:
        """The tools served right now."""
        return self._toolset

    def init_options(self) -> InitializationOptions:
        """The ``initialize`` result (2025-11-25): ``tools.listChanged`` is true when
        reloading; ``logging`` is offered."""
        options = self.lowlevel.create_initialization_options(
            NotificationOptions(tools_changed=self.reload)
        )
        # Core tasks (2025-11-25): tools/call may run as a task; tasks/list and tasks/cancel.
        options.capabilities.tasks = types.ServerTasksCapability.model_validate(
            {"list": {}, "cancel": {}, "requests": {"tools": {"call": {}}}}
        )
        return options

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        # Built once per snapshot; the whole list in one page, in name order.
        toolset = self._toolset
        hidden = toolset.hidden_from(caller(ctx))
        return without(toolset.listing, hidden) if hidden else toolset.listing

    def _input_schema(self, name: str) -> dict[str, Any] | None:
        # What the 2026-07-28 HTTP entry checks Mcp-Param-* headers against (None: the tool
        # declares none, nothing to check).
        return self._toolset.header_schema(name)

    def _wire_listing(self, toolset: ToolSet, version: str) -> dict[str, Any]:
        if version == PROTOCOL_VERSION:
            return wire_listing(toolset)
        modern = serialize_server_result("tools/list", MODERN, toolset.modern_listing)
        if self.reload:  # the list may change at any moment: clients must not reuse it
            modern["ttlMs"] = 0
        return modern

    async def _route(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        # One server middleware, not one per concern (each is a coroutine frame for every
        # request): the span's attributes, the prebuilt tools/list, task-augmented calls.
        self.connection_attributes.annotate(ctx)
        method = ctx.method
        if method == "tools/list":
            listing = self._prebuilt_list(ctx)
            if listing is not None:
                return listing
        elif method == "tools/call" and ctx.protocol_version == PROTOCOL_VERSION:
            # A 2025-11-25 task-augmented tools/call answers {"task": ...}, a shape the SDK's
            # result check for tools/call does not know: the call is run here, past that check.
            params = ctx.params
            if isinstance(params, dict) and params.get("task") is not None:
                typed = types.CallToolRequestParams.model_validate(params, by_name=False)
                return await self._calls(ctx, typed)
        return await call_next(ctx)

    def _prebuilt_list(self, ctx: ServerRequestContext[Any, Any]) -> dict[str, Any] | None:
        # tools/list is answered with the listing serialized once per snapshot: the SDK would
        # otherwise validate and re-serialize every tool on every request (about 20 ms for
        # 1,000 tools). Older revisions go through the regular path (None).
        version = ctx.protocol_version
        if version not in PROTOCOL_VERSIONS:
            return None
        toolset, built = self._toolset, self._wire  # the same snapshot for both
        wire = built.get(version)
        if wire is None:  # the first tools/list of this revision since start or reload
            wire = built[version] = self._wire_listing(toolset, version)
        hidden = toolset.hidden_from(caller(ctx))
        if hidden:  # the tools whose scopes the caller's token lacks are left out
            wire = self._scoped_listing(wire, version, hidden)
        # A 2026-07-28 result names the server in _meta (the runner's stamp).
        return {**wire, "_meta": self._stamp} if version == MODERN else wire

    def _scoped_listing(
        self, wire: dict[str, Any], version: str, hidden: frozenset[str]
    ) -> dict[str, Any]:
        scoped, key = self._scoped, (version, hidden)
        found = scoped.get(key)
        if found is None:
            if len(scoped) > 256:  # bounded: which tools are hidden follows the token's scopes
                scoped.clear()
            found = scoped[key] = without(wire, hidden)
        return found

    async def _track_connection(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        # The SDK keeps no public list of connections; remember each (weakly) so a reload can
        # tell every client its tool list changed.
        connection = getattr(ctx.session, "_connection", None)
        if connection is not None:
            self._connections.add(connection)
        return await call_next(ctx)

    async def swap(self, toolset: ToolSet, *, notify: bool = True) -> None:
        """Serve ``toolset`` from now on and (with ``notify``) tell every connected client."""
        self._toolset, self._wire, self._scoped = toolset, {}, {}
        if not notify:
            return
        for connection in list(self._connections):
            # A client that went away (or stopped reading) must not hold up the others.
            with anyio.move_on_after(NOTIFY_TIMEOUT):
                try:
                    await connection.send_tool_list_changed()
                except Exception:
                    log.debug("could not notify a client of the tool list change", exc_info=True)


def without(listing: dict[str, Any], hidden: frozenset[str]) -> dict[str, Any]:
    """A ``tools/list`` result without the tools named in ``hidden``."""
    tools = [t for t in listing.get("tools", ()) if t.get("name") not in hidden]
    return {**listing, "tools": tools}


def wire_listing(toolset: ToolSet) -> dict[str, Any]:
    """The 2025-11-25 ``tools/list`` result as the SDK would put it on the wire (validated
    once here)."""
    return serialize_server_result("tools/list", PROTOCOL_VERSION, toolset.listing)
