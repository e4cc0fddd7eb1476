"""How a request in a 2025-11-25 session is answered (``toolctl.server.answers``): one JSON body
when its result comes first and quickly; an SSE stream opening with the priming event (and so
resumable) when the call sends something else first or takes longer. Driven in-process: a
session transport, a stand-in for the MCP server behind it, and ASGI messages."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import anyio
import pytest
from mcp.server.streamable_http import StreamableHTTPServerTransport
from mcp.shared.message import ServerMessageMetadata, SessionMessage
from mcp_types import JSONRPCNotification, JSONRPCResponse

from toolctl.server import answers
from toolctl.server.answers import QuickAnswers, answer_quickly
from toolctl.server.sseevents import RETRY_MS, SessionEvents

SESSION = "s3ss10n"
ACCEPT_BOTH = "application/json, text/event-stream"
Serve = Callable[[Any, Any, Any], Awaitable[None]]  # (request, write stream, transport)


def _call(request_id: int = 7) -> bytes:
    params = {"name": "add", "arguments": {"a": 1, "b": 2}}
    return json.dumps(
        {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}
    ).encode()


def _result(request_id: Any) -> SessionMessage:
    return SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request_id, result={"sum": 3}))


def _progress(request_id: Any) -> SessionMessage:
    note = JSONRPCNotification(
        jsonrpc="2.0",
        method="notifications/progress",
        params={"progressToken": 1, "progress": 1},
    )
    return SessionMessage(note, metadata=ServerMessageMetadata(related_request_id=request_id))


def _post(
    serve: Serve, body: bytes, accept: str = ACCEPT_BOTH, sent: list[dict[str, Any]] | None = None
) -> tuple[list[dict[str, Any]], SessionEvents]:
    """POST ``body`` to a fresh session's transport whose server answers with ``serve``: the
    ASGI messages sent back (also into ``sent`` as they go), and the session's event store."""
    store = SessionEvents()
    transport = StreamableHTTPServerTransport(SESSION, event_store=store, retry_interval=RETRY_MS)
    answer_quickly(transport)
    assert isinstance(transport, QuickAnswers)
    sent = [] if sent is None else sent
    headers = [
        (b"content-type", b"application/json"),
        (b"accept", accept.encode()),
        (b"mcp-session-id", SESSION.encode()),
        (b"mcp-protocol-version", b"2025-11-25"),
    ]
    scope = {"type": "http", "method": "POST", "path": "/mcp", "headers": headers}
    scope |= {"query_string": b"", "http_version": "1.1", "scheme": "http"}
    delivered = False

    async def receive() -> dict[str, Any]:
        nonlocal delivered
        if not delivered:
            delivered = True
            return {"type": "http.request", "body": body, "more_body": False}
        await anyio.sleep_forever()
        raise AssertionError("unreachable")

    async def send(message: Any) -> None:
        sent.append(dict(message))

    async def main() -> None:
        served = anyio.Event()
        dispatched = False
        async with transport.connect() as (read, write), anyio.create_task_group() as tg:

            async def server() -> None:
                nonlocal dispatched
                async for message in read:
                    dispatched = True
                    await serve(message.message, write, transport)
                    served.set()

            tg.start_soon(server)
            with anyio.fail_after(10):
                await transport.handle_request(scope, receive, send)
                if dispatched:  # the server may still send after the answer's stream ended
                    await served.wait()
            tg.cancel_scope.cancel()

    anyio.run(main)
    return sent, store


def _headers(start: dict[str, Any]) -> dict[bytes, bytes]:
    return {name.lower(): value for name, value in start["headers"]}


def _body(sent: list[dict[str, Any]]) -> bytes:
    return b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def _events(sent: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The SSE events of the response, each as its fields."""
    events = []
    for block in _body(sent).decode().replace("\r\n", "\n").split("\n\n"):
        if block.strip():
            events.append(dict(line.split(": ", 1) for line in block.split("\n") if ": " in line))
    return events


def _replay(store: SessionEvents, after: str) -> tuple[str | None, list[Any]]:
    """What a client reconnecting with ``Last-Event-ID: after`` is sent: the stream's id and
    the events."""
    replayed: list[Any] = []

    async def resend(event: Any) -> None:
        replayed.append(event)

    async def replay() -> str | None:
        return await store.replay_events_after(after, resend)

    return anyio.run(replay), replayed


def test_a_quick_result_is_one_json_body() -> None:
    async def serve(request: Any, write: Any, transport: Any) -> None:
        await write.send(_result(request.id))

    sent, _ = _post(serve, _call(7))
    start = sent[0]
    assert start["status"] == 200
    headers = _headers(start)
    assert headers[b"content-type"] == b"application/json"
    assert headers[b"mcp-session-id"] == SESSION.encode()
    assert json.loads(_body(sent)) == {"jsonrpc": "2.0", "id": 7, "result": {"sum": 3}}


def test_a_call_that_sends_something_first_streams_after_its_priming_event() -> None:
    async def serve(request: Any, write: Any, transport: Any) -> None:
        await write.send(_progress(request.id))
        await write.send(_result(request.id))

    sent, store = _post(serve, _call(8))
    assert _headers(sent[0])[b"content-type"].startswith(b"text/event-stream")
    priming, progress, result = _events(sent)
    # the priming event first: an id, empty data and the retry hint (SEP-1699)
    assert priming["data"] == "" and priming["retry"] == str(RETRY_MS)
    assert json.loads(progress["data"])["method"] == "notifications/progress"
    assert json.loads(result["data"]) == {"jsonrpc": "2.0", "id": 8, "result": {"sum": 3}}
    assert int(priming["id"]) < int(progress["id"]) < int(result["id"])

    # a client whose connection dropped after the priming event gets the rest on reconnecting
    stream, replayed = _replay(store, priming["id"])
    assert stream == "8" and [e.event_id for e in replayed] == [progress["id"], result["id"]]


def test_a_slow_call_gets_its_priming_event_before_its_result(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(answers, "QUICK_ANSWER_S", 0.02)  # the suite waits 0.1 s, not 0.5
    sent: list[dict[str, Any]] = []
    on_the_wire_before_the_result: list[bytes] = []

    async def serve(request: Any, write: Any, transport: Any) -> None:
        await anyio.sleep(0.1)
        on_the_wire_before_the_result.append(_body(sent))
        await write.send(_result(request.id))

    _post(serve, _call(9), sent=sent)
    priming, result = _events(sent)
    assert priming["data"] == "" and priming["retry"] == str(RETRY_MS)
    assert json.loads(result["data"])["id"] == 9
    # the priming event went out while the call was still running, not with its result
    assert on_the_wire_before_the_result == [
        f"id: {priming['id']}".encode()
        + b"\r\ndata: \r\n"
        + f"retry: {RETRY_MS}".encode()
        + b"\r\n\r\n"
    ]


def test_a_stream_closed_for_polling_before_any_answer_still_primes_and_resumes() -> None:
    # SEP-1699 polling: the server closes the request's stream before sending anything; the
    # client gets the priming event, and the result later on reconnecting with its id
    async def serve(request: Any, write: Any, transport: Any) -> None:
        transport.close_sse_stream(str(request.id))
        await anyio.sleep(0.05)
        await write.send(_result(request.id))
        await anyio.sleep(0.05)  # the router stores it before the session ends

    sent, store = _post(serve, _call(10))
    assert _headers(sent[0])[b"content-type"].startswith(b"text/event-stream")
    (priming,) = _events(sent)
    assert priming["data"] == "" and priming["retry"] == str(RETRY_MS)
    stream, replayed = _replay(store, priming["id"])
    assert stream == "10" and [e.message.id for e in replayed] == [10]


@pytest.mark.parametrize(
    ("body", "accept", "status"),
    [
        (b"{not json", ACCEPT_BOTH, 400),  # a parse error, as the SDK answers it
        (_call(), "application/json", 406),  # a client that cannot take an SSE stream
    ],
    ids=["malformed", "json-only-accept"],
)
def test_other_posts_get_the_sdks_answers(body: bytes, accept: str, status: int) -> None:
    async def serve(
        request: Any, write: Any, transport: Any
    ) -> None:  # pragma: no cover - never reached
        await write.send(_result(request.id))

    sent, _ = _post(serve, body, accept)
    assert sent[0]["status"] == status
