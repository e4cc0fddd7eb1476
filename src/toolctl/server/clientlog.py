"""Log lines of a running tool, sent to the MCP client as ``notifications/message``.

What a handler writes through ``ctx.observe.log`` (the ``toolctl.tool.<name>`` loggers, already
redacted) reaches the client that made the call, at the level the client chose: in 2025-11-25
with ``logging/setLevel`` (per connection; nothing is sent before the client sets a level), in
2026-07-28 with the ``io.modelcontextprotocol/logLevel`` key of each request's ``_meta`` (the SDK
drops what the request did not opt into). With ``forward_python_logging`` the records of any
other Python logger written during a call reach the client too (redacted the same way).

A record is matched to its call by the run id ``observe.log`` stamps on it, else by the context
of the call (async handlers) or the runtime's worker thread name (``toolctl:<run id>``).
Background and subprocess-isolated runs log in another process: their lines stay there.
"""

from __future__ import annotations

import contextvars
import logging
import weakref
from typing import TYPE_CHECKING, Any

from mcp_types import LOG_LEVEL_META_KEY
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from toolctl.runtime.redact import RedactingFilter
from toolctl.server.interaction import LEVELS

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from toolctl.server.interaction import Relay

TOOL_LOGGER = "toolctl.tool"
_THREAD_PREFIX = "toolctl:"
_current: contextvars.ContextVar[Relay | None] = contextvars.ContextVar(
    "toolctl_client_log", default=None
)


def mcp_level(levelno: int) -> str:
    """The MCP log level of a Python level number."""
    if levelno >= logging.CRITICAL:
        return "critical"
    if levelno >= logging.ERROR:
        return "error"
    if levelno >= logging.WARNING:
        return "warning"
    return "info" if levelno >= logging.INFO else "debug"


class ClientLog:
    """The log levels clients chose and the calls whose lines they receive."""

    def __init__(self, *, forward_python_logging: bool = False) -> None:
        self._levels: weakref.WeakKeyDictionary[Any, str] = weakref.WeakKeyDictionary()
        self._calls: dict[str, Relay] = {}
        self._handler = _Forward(self)
        self.forward_python_logging = forward_python_logging

    async def set_level(self, ctx: ServerRequestContext[Any, Any], params: Any) -> dict[str, Any]:
        """``logging/setLevel``: the lowest level this connection receives from now on."""
        connection = getattr(ctx.session, "_connection", None)
        if connection is not None:
            self._levels[connection] = str(params.level)
        self.install()
        return {}

    def threshold(self, ctx: ServerRequestContext[Any, Any]) -> str | None:
        """The lowest level to send for this request, or None when it wants no log lines."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            level = (ctx.meta or {}).get(LOG_LEVEL_META_KEY)
            return str(level) if level in LEVELS else None
        return self._levels.get(getattr(ctx.session, "_connection", None))

    def install(self) -> None:
        """Attach the forwarding handler (once) to the loggers it listens to."""
        # One place only: the root logger sees the tool loggers' records too (propagation).
        name = None if self.forward_python_logging else TOOL_LOGGER
        logger = logging.getLogger(name)
        if self._handler not in logger.handlers:
            logger.addHandler(self._handler)
        if logging.getLogger(TOOL_LOGGER).getEffectiveLevel() > logging.DEBUG:
            # The handler filters by each client's level; the logger must let lines through.
            logging.getLogger(TOOL_LOGGER).setLevel(logging.DEBUG)

    def attach(self, run_id: str, relay: Relay) -> contextvars.Token[Relay | None]:
        """Send the log lines of run ``run_id`` (and of this context) through ``relay``."""
        self._calls[run_id] = relay
        self.install()
        return _current.set(relay)

    def detach(self, run_id: str, token: contextvars.Token[Relay | None]) -> None:
        """Stop sending the lines of ``run_id``."""
        self._calls.pop(run_id, None)
        _current.reset(token)

    def relay_for(self, record: logging.LogRecord) -> Relay | None:
        """The call a record belongs to, if any call is listening."""
        run_id = getattr(record, "toolctl_run_id", None)
        if run_id is None and record.threadName and record.threadName.startswith(_THREAD_PREFIX):
            run_id = record.threadName[len(_THREAD_PREFIX) :]
        relay = self._calls.get(run_id) if isinstance(run_id, str) else None
        return relay if relay is not None else _current.get()


class _Forward(logging.Handler):
    def __init__(self, owner: ClientLog) -> None:
        super().__init__(logging.DEBUG)
        self._owner = owner
        self._redact = RedactingFilter()

    def emit(self, record: logging.LogRecord) -> None:
        owner = self._owner
        if not owner._calls:
            return
        from_tool = record.name == TOOL_LOGGER or record.name.startswith(TOOL_LOGGER + ".")
        if not from_tool and not owner.forward_python_logging:
            return
        if record.name.startswith(("toolctl.server", "mcp.", "mcp_types", "uvicorn")):
            return  # the server's own log never goes to a client
        relay = owner.relay_for(record)
        if relay is None:
            return
        self._redact.filter(record)  # records of other loggers are redacted too (only these)
        data: dict[str, Any] = {"message": record.getMessage()}
        fields = getattr(record, "toolctl_fields", None)
        if fields:
            data["fields"] = fields
        run_id = getattr(record, "toolctl_run_id", None)
        if run_id:
            data["runId"] = run_id
        relay.log(mcp_level(record.levelno), data, record.name)
