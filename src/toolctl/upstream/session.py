"""An initialized MCP session with an upstream, and the one pool of them per process.

:class:`Session` does the handshake, lists tools (paginated, bounded) and calls one tool with a
deadline. :func:`session_for` hands out one session per upstream (command line and env, or URL)
for the whole process, reconnecting when the previous one died; :func:`close_all` ends them
(registered with ``atexit``).
"""

from __future__ import annotations

import asyncio
import atexit
import json
import threading
from concurrent.futures import Future
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

from toolctl import __version__
from toolctl.upstream.connection import (
    PROTOCOL_VERSION,
    Connection,
    HttpConnection,
    StdioConnection,
    UpstreamError,
    next_id,
)

CONNECT_TIMEOUT_S = 30.0
LIST_TIMEOUT_S = 30.0
CALL_TIMEOUT_S = 60.0
MAX_PAGES = 100
MAX_TOOLS = 5000


class Session:
    """One initialized connection."""

    def __init__(self, connection: Connection, label: str) -> None:
        self.connection = connection
        self.label = label
        self.server_info: dict[str, Any] = {}

    def initialize(self, timeout: float = CONNECT_TIMEOUT_S) -> None:
        """The MCP handshake: ``initialize``, then ``notifications/initialized``."""
        result = self.request(
            "initialize",
            {
                "protocolVersion": PROTOCOL_VERSION,
                "capabilities": {},
                "clientInfo": {"name": "toolctl", "version": __version__},
            },
            timeout,
        )
        info = result.get("serverInfo")
        self.server_info = info if isinstance(info, dict) else {}
        if isinstance(self.connection, HttpConnection) and isinstance(
            result.get("protocolVersion"), str
        ):
            self.connection.headers["mcp-protocol-version"] = result["protocolVersion"]
        self.connection.notify({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def send(self, method: str, params: dict[str, Any]) -> tuple[Any, Future[dict[str, Any]]]:
        """Send a request; its id and the future of its answer."""
        ident = next_id()
        message = {"jsonrpc": "2.0", "id": ident, "method": method, "params": params}
        return ident, self.connection.request(message)

    def request(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """Send and wait (blocking) for the result; :class:`UpstreamError` otherwise."""
        ident, future = self.send(method, params)
        try:
            answer = future.result(timeout)
        except FutureTimeout:
            self.cancel(ident, "timed out")
            raise UpstreamError(
                f"{self.label} did not answer {method} within {timeout:g} s"
            ) from None
        return self.result_of(method, answer)

    async def arequest(self, method: str, params: dict[str, Any], timeout: float) -> dict[str, Any]:
        """:meth:`request` for a coroutine: cancelling it cancels the upstream's request."""
        ident, future = self.send(method, params)
        try:
            answer = await asyncio.wait_for(asyncio.wrap_future(future), timeout)
        except asyncio.TimeoutError:
            self.cancel(ident, "timed out")
            raise UpstreamError(
                f"{self.label} did not answer {method} within {timeout:g} s"
            ) from None
        except asyncio.CancelledError:
            self.cancel(ident, "cancelled")
            raise
        return self.result_of(method, answer)

    def cancel(self, ident: Any, reason: str) -> None:
        """Tell the upstream to stop working on request ``ident``."""
        if self.connection.alive:
            self.connection.notify(
                {
                    "jsonrpc": "2.0",
                    "method": "notifications/cancelled",
                    "params": {"requestId": ident, "reason": reason},
                }
            )

    def result_of(self, method: str, answer: dict[str, Any]) -> dict[str, Any]:
        """The ``result`` of an answer; :class:`UpstreamError` for an error answer."""
        if isinstance(answer.get("error"), dict):
            message = str(answer["error"].get("message", "error"))[:500]
            raise UpstreamError(f"{self.label} refused {method}: {message}")
        result = answer.get("result")
        if not isinstance(result, dict):
            raise UpstreamError(f"{self.label} answered {method} without a result object")
        return result

    def list_tools(self, timeout: float = LIST_TIMEOUT_S) -> list[Any]:
        """Every tool of the upstream (all pages), at most :data:`MAX_TOOLS`: as sent, so the
        importer can say what it skipped."""
        tools: list[Any] = []
        cursor: Any = None
        for _ in range(MAX_PAGES):
            page = self.request("tools/list", {"cursor": cursor} if cursor else {}, timeout)
            found = page.get("tools")
            if not isinstance(found, list):
                raise UpstreamError(f"{self.label}: tools/list has no `tools` list")
            tools.extend(found)  # what is not a definition is reported by the importer
            if len(tools) > MAX_TOOLS:
                raise UpstreamError(f"{self.label} lists more than {MAX_TOOLS} tools")
            cursor = page.get("nextCursor")
            if not isinstance(cursor, str) or not cursor:
                return tools
        raise UpstreamError(f"{self.label}: tools/list goes on past {MAX_PAGES} pages")

    def close(self) -> None:
        """End the connection."""
        self.connection.close()


def upstream_key(block: dict[str, Any]) -> str:
    """What identifies one upstream server (the tool name does not)."""
    ident = {k: block.get(k) for k in ("command", "args", "env", "url", "headers")}
    return json.dumps(ident, sort_keys=True)


def label_of(block: dict[str, Any]) -> str:
    """How messages name the upstream."""
    if block.get("url"):
        return f"the upstream {block['url']}"
    return (
        f"the upstream `{' '.join([str(block.get('command')), *map(str, block.get('args', []))])}`"
    )


def connect(block: dict[str, Any], env: dict[str, str] | None = None) -> Session:
    """A new, initialized session with the upstream ``block`` describes."""
    label = label_of(block)
    connection: Connection
    if block.get("url"):
        connection = HttpConnection(str(block["url"]), block.get("headers", {}), CALL_TIMEOUT_S)
    else:
        connection = StdioConnection(
            str(block["command"]), [str(a) for a in block.get("args", [])], env or {}
        )
    session = Session(connection, label)
    try:
        session.initialize(float(block.get("connectTimeout", CONNECT_TIMEOUT_S)))
    except BaseException:
        session.close()
        raise
    return session


class Pool:
    """One live session per upstream for the whole process (see :func:`session_for`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._sessions: dict[str, Session] = {}

    def get(self, block: dict[str, Any], env: dict[str, str]) -> Session:
        """The live session for ``block``; connects (again) when there is none."""
        key = upstream_key(block)
        with self._lock:
            session = self._sessions.get(key)
            if session is not None and session.connection.alive:
                return session
            if session is not None:  # it died (crashed, broke the protocol): reap it first
                session.close()
            session = connect(block, env)
            self._sessions[key] = session
            return session

    def close_all(self) -> None:
        """End every session (at exit)."""
        with self._lock:
            sessions, self._sessions = list(self._sessions.values()), {}
        for session in sessions:
            session.close()


# Process-wide on purpose: "one upstream connection per process" is the contract, and the
# connections must be ended when the process ends, whichever front end ran the calls.
_POOL = Pool()
atexit.register(_POOL.close_all)


def session_for(block: dict[str, Any], env: dict[str, str]) -> Session:
    """The process's session with the upstream ``block`` describes."""
    return _POOL.get(block, env)


def close_all() -> None:
    """End every upstream session of this process."""
    _POOL.close_all()
