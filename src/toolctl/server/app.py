"""The MCP server object: a low-level SDK ``Server`` over a swappable :class:`ToolSet`.

The low-level server fits a registry whose schemas come from YAML (no function signatures to
introspect) and is several times cheaper per call than the SDK's high-level ``MCPServer``. The
server speaks the 2025-11-25 handshake revision: it declines the 2026-07-28 ``server/discover``
probe, so every client falls back to ``initialize`` (server-to-client requests such as
elicitation, and ``notifications/tools/list_changed``, exist only in that revision).
"""

from __future__ import annotations

import logging
import weakref
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.server.lowlevel import NotificationOptions, Server
from mcp.server.models import InitializationOptions
from mcp.shared.exceptions import MCPError
from mcp_types.methods import serialize_server_result

from toolctl import __version__
from toolctl.server.calls import CallHandler

if TYPE_CHECKING:
    from mcp.server.connection import Connection
    from mcp.server.context import CallNext, HandlerResult, ServerRequestContext

    from toolctl.server.toolset import ToolSet

log = logging.getLogger("toolctl.server")
NOTIFY_TIMEOUT = 1.0
PROTOCOL_VERSION = "2025-11-25"  # the revision of the prebuilt listing (the mcp export's default)


class ToolServer:
    """Serves one :class:`ToolSet` at a time; :meth:`swap` replaces it atomically."""

    def __init__(self, toolset: ToolSet, *, name: str = "toolctl", reload: bool = False) -> None:
        self._toolset = toolset
        self._wire_listing = wire_listing(toolset)
        self.reload = reload
        self._connections: weakref.WeakSet[Connection] = weakref.WeakSet()
        self.lowlevel: Server[Any] = Server(name, version=__version__)
        # Registered by method so the handlers may return prebuilt wire dicts.
        low = self.lowlevel
        low.add_request_handler("tools/list", types.PaginatedRequestParams, self._list_tools)
        low.add_request_handler(
            "tools/call", types.CallToolRequestParams, CallHandler(lambda: self._toolset)
        )
        low.add_request_handler("server/discover", types.RequestParams, _no_discover)
        low.middleware.insert(0, self._prebuilt_list)
        if reload:
            self.lowlevel.middleware.append(self._track_connection)

    @property
    def toolset(self) -> ToolSet:
        """The tools served right now."""
        return self._toolset

    def init_options(self) -> InitializationOptions:
        """The ``initialize`` result: ``tools.listChanged`` is true when reloading."""
        return self.lowlevel.create_initialization_options(
            NotificationOptions(tools_changed=self.reload)
        )

    async def _list_tools(
        self, ctx: ServerRequestContext[Any, Any], params: types.PaginatedRequestParams
    ) -> dict[str, Any]:
        # Built once per snapshot; the whole list in one page, in name order.
        return self._toolset.listing

    async def _prebuilt_list(
        self, ctx: ServerRequestContext[Any, Any], call_next: CallNext
    ) -> HandlerResult:
        # tools/list is answered with the listing serialized once per snapshot: the SDK would
        # otherwise validate and re-serialize every tool on every request (about 20 ms for
        # 1,000 tools). Other revisions go through the regular path.
        if ctx.method == "tools/list" and ctx.protocol_version == PROTOCOL_VERSION:
            return self._wire_listing
        return await call_next(ctx)

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
        wire = wire_listing(toolset)
        self._toolset, self._wire_listing = toolset, wire
        if not notify:
            return
        for connection in list(self._connections):
            # A client that went away (or stopped reading) must not hold up the others.
            with anyio.move_on_after(NOTIFY_TIMEOUT):
                try:
                    await connection.send_tool_list_changed()
                except Exception:
                    log.debug("could not notify a client of the tool list change", exc_info=True)


def wire_listing(toolset: ToolSet) -> dict[str, Any]:
    """The ``tools/list`` result as the SDK would put it on the wire (validated once here)."""
    return serialize_server_result("tools/list", PROTOCOL_VERSION, toolset.listing)


async def _no_discover(ctx: ServerRequestContext[Any, Any], params: Any) -> Any:
    raise MCPError(code=types.METHOD_NOT_FOUND, message="Method not found", data="server/discover")
