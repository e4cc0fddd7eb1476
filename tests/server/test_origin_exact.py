"""Host and Origin are matched exactly (issue 20, class 7): scheme, host and port.

The SDK's check is a prefix match (``origin.startswith("http://127.0.0.1:")``), so a page at
``http://127.0.0.1:8000.evil.com`` passed as a loopback origin. toolctl's dispatch step refuses it
in front of the SDK. These tests drive the real ASGI app in process (no server started).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import anyio
import pytest

import toolctl
from toolctl.server.dispatch import Dispatch
from toolctl.server.run import ServeOptions, http_app, prepare
from toolctl.server.security import (
    LOOPBACK_HOSTS,
    LOOPBACK_ORIGINS,
    host_allowed,
    http_security,
    origin_allowed,
)

PING = {"jsonrpc": "2.0", "id": 1, "method": "ping"}


def _post(registry_dir: Path, **headers: str) -> int:
    """The status of one POST to /mcp of the app ``toolctl serve --transport http`` builds."""
    registry = toolctl.load(project=registry_dir, packs=False)
    options = ServeOptions(transport="http")
    server, security = prepare(registry, options)
    assert security is not None
    return _status(http_app(server, options, security), **headers)


async def _ok(scope: Any, receive: Any, send: Any) -> None:
    """An ASGI app that answers 200: what the SDK's app stands for behind the check."""
    await send({"type": "http.response.start", "status": 200, "headers": []})
    await send({"type": "http.response.body", "body": b""})


def _status(app: Any, **headers: str) -> int:
    """The status ``app`` answers a loopback POST /mcp with ``headers`` added, driven as an
    ASGI server would drive it."""

    scope = {
        "type": "http",
        "asgi": {"version": "3.0"},
        "http_version": "1.1",
        "method": "POST",
        "scheme": "http",
        "path": "/mcp",
        "raw_path": b"/mcp",
        "query_string": b"",
        "root_path": "",
        "client": ("127.0.0.1", 50000),
        "server": ("127.0.0.1", 8000),
        "headers": [
            (name.lower().encode("latin-1"), value.encode("latin-1"))
            for name, value in {
                "Host": "127.0.0.1:8000",
                "Content-Type": "application/json",
                **headers,
            }.items()
        ],
    }
    body = json.dumps(PING).encode()
    statuses: list[int] = []

    async def receive() -> dict[str, Any]:
        return {"type": "http.request", "body": body, "more_body": False}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            statuses.append(message["status"])

    async def go() -> int:
        with anyio.fail_after(20):
            await app(scope, receive, send)
        return statuses[0]

    return anyio.run(go)


@pytest.mark.parametrize(
    "origin",
    [
        "http://127.0.0.1:8000.evil.com",
        "http://localhost:8000.evil.com",
        "http://127.0.0.1:8000@evil.com",
        "http://127.0.0.1:8000/evil",
        "https://127.0.0.1:8000",  # another scheme is another origin
        "http://127.0.0.1:99999",
        "null",
    ],
)
def test_an_origin_that_only_starts_like_loopback_is_refused(
    registry_dir: Path, origin: str
) -> None:
    assert _post(registry_dir, Origin=origin) == 403


def test_a_host_that_only_starts_like_loopback_is_refused(registry_dir: Path) -> None:
    assert _post(registry_dir, Host="127.0.0.1:8000.evil.com") == 421


@pytest.mark.parametrize(
    "origin", ["http://127.0.0.1:8000", "http://localhost:5173", "http://[::1]:8000"]
)
def test_loopback_origins_on_any_port_pass_the_check(origin: str) -> None:
    security = http_security("127.0.0.1")
    assert _status(Dispatch(_ok, security, 4096), Origin=origin) == 200
    assert _status(Dispatch(_ok, security, 4096)) == 200  # no Origin: not from a browser page


def test_verdicts_are_remembered_boundedly_and_never_change() -> None:
    # Each request's Host and Origin verdict is remembered (a client sends the same ones every
    # time); a client sending a new value each time neither grows the memory nor flips one.
    dispatch = Dispatch(_ok, http_security("127.0.0.1"), 4096)
    evil = "http://127.0.0.1:8000.evil.com"
    for i in range(600):
        assert _status(dispatch, Host=f"127.0.0.1:{1000 + i}") == 200
        assert _status(dispatch, Origin=f"http://localhost:{1000 + i}.evil.com") == 403
        if i % 100 == 0:
            assert _status(dispatch, Origin=evil) == 403
            assert _status(dispatch, Host="127.0.0.1:8000.evil.com") == 421
    assert len(dispatch._hosts) <= 256 and len(dispatch._origins) <= 256


def test_exact_matching_of_configured_origins_and_hosts() -> None:
    allowed = (*LOOPBACK_ORIGINS, "https://app.example.com")
    assert origin_allowed("https://app.example.com", allowed)
    assert not origin_allowed("https://app.example.com.evil.net", allowed)
    assert not origin_allowed("https://app.example.com:8443", allowed)
    assert not origin_allowed("http://app.example.com", allowed)
    assert host_allowed("[::1]:9000", LOOPBACK_HOSTS)
    assert not host_allowed("[::1]:9000.evil.com", LOOPBACK_HOSTS)
    assert not host_allowed("", LOOPBACK_HOSTS)
