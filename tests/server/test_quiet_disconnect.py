"""A client that disconnects mid-body (issue 20, class 7) leaves at most a one-line note in
the server log: no traceback, no error record, and the MCP app is never asked to read a body
that will not come."""

from __future__ import annotations

import logging
from typing import Any

import anyio
import pytest

from toolctl.server.dispatch import Dispatch
from toolctl.server.security import http_security

SCOPE = {
    "type": "http",
    "method": "POST",
    "path": "/mcp",
    "headers": [
        (b"host", b"127.0.0.1:8000"),
        (b"content-type", b"application/json"),
        (b"content-length", b"1000"),
    ],
}


def _drive(messages: list[dict[str, Any]]) -> list[str]:
    """Feed ``messages`` to the dispatch step in front of an app that records what it read."""
    seen: list[str] = []

    async def app(scope: Any, receive: Any, send: Any) -> None:
        seen.append((await receive())["type"])

    async def receive() -> dict[str, Any]:
        return messages.pop(0)

    async def send(message: dict[str, Any]) -> None:
        pass

    anyio.run(Dispatch(app, http_security("127.0.0.1"), 4096), SCOPE, receive, send)
    return seen


def test_a_client_gone_mid_body_is_a_quiet_note(caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    partial = {"type": "http.request", "body": b'{"jsonrpc": "2.0", ', "more_body": True}
    assert _drive([partial, {"type": "http.disconnect"}]) == []  # the app never reads it
    records = [r for r in caplog.records if r.name.startswith(("toolctl", "mcp"))]
    assert len(records) == 1 and records[0].levelno == logging.INFO
    assert "disconnected" in records[0].getMessage() and records[0].exc_info is None


def test_a_whole_body_still_reaches_the_app() -> None:
    whole = {"type": "http.request", "body": b'{"jsonrpc": "2.0"}', "more_body": False}
    assert _drive([whole]) == ["http.request"]
