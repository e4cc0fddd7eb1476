"""The per-session SSE event store (2025-11-25 Streamable HTTP resumability, SEP-1699): what a
client reconnecting with Last-Event-ID gets back. Over HTTP, the conformance suite's
server-sse-polling scenario checks the priming event and the retry field
(tests/server/test_node_clients.py)."""

from __future__ import annotations

from typing import Any

import anyio
import pytest

from toolctl.server import sseevents
from toolctl.server.sseevents import PrimedWrites, SessionEvents


def _replay(store: SessionEvents, last: str) -> tuple[str | None, list[tuple[str, Any]]]:
    sent: list[tuple[str, Any]] = []

    async def send(event: Any) -> None:
        sent.append((event.event_id, event.message))

    async def go() -> str | None:
        return await store.replay_events_after(last, send)

    return anyio.run(go), sent


def _store(store: SessionEvents, stream: str, message: Any) -> str:
    async def go() -> str:
        return await store.store_event(stream, message)

    return anyio.run(go)


def test_a_reconnecting_client_gets_what_came_after_its_last_event() -> None:
    store = SessionEvents()
    primed = _store(store, "1", None)
    first = _store(store, "1", {"progress": 1})
    other = _store(store, "2", {"result": "of request 2"})
    last = _store(store, "1", {"result": "of request 1"})
    assert _replay(store, primed) == (
        "1",
        [(first, {"progress": 1}), (last, {"result": "of request 1"})],
    )
    # only its own stream's events, never another request's
    assert _replay(store, first) == ("1", [(last, {"result": "of request 1"})])
    assert other not in [event_id for event_id, _ in _replay(store, primed)[1]]


def test_a_request_id_used_again_starts_a_new_stream() -> None:
    store = SessionEvents()
    old = _store(store, "1", None)
    _store(store, "1", {"result": "old"})
    new = _store(store, "1", None)
    fresh = _store(store, "1", {"result": "new"})
    assert _replay(store, new) == ("1", [(fresh, {"result": "new"})])
    assert _replay(store, old) == (None, [])  # forgotten: the client calls again


def test_the_store_is_bounded() -> None:
    store = SessionEvents(max_streams=2, max_events=3)
    gone = _store(store, "a", None)
    for stream in ("b", "c"):
        _store(store, stream, None)
    assert _replay(store, gone) == (None, [])  # the oldest stream was dropped
    first = _store(store, "c", {"n": 1})
    for n in range(2, 6):
        _store(store, "c", {"n": n})
    assert _replay(store, first) == (None, [])  # only the last 3 events of a stream are kept


SSE_START = {
    "type": "http.response.start",
    "status": 200,
    "headers": [(b"content-type", b"text/event-stream")],
}
PRIMING = b"id: 1\r\ndata: \r\nretry: 1000\r\n\r\n"
RESULT = b'id: 2\r\nevent: message\r\ndata: {"result": {}}\r\n\r\n'


def _written(messages: list[dict[str, Any]], pause: float = 0.0) -> list[dict[str, Any]]:
    """What reaches the server's ``send`` through :class:`PrimedWrites`, with ``pause``
    seconds between the priming event and the rest."""
    wire: list[dict[str, Any]] = []

    async def send(message: Any) -> None:
        wire.append(dict(message))

    async def go() -> None:
        writes = PrimedWrites(send)
        await writes(messages[0])
        await writes(messages[1])
        await anyio.sleep(pause)
        for message in messages[2:]:
            await writes(message)

    anyio.run(go)
    return wire


def test_the_priming_event_goes_out_with_a_quick_result_in_one_write() -> None:
    wire = _written(
        [
            SSE_START,
            {"type": "http.response.body", "body": PRIMING, "more_body": True},
            {"type": "http.response.body", "body": RESULT, "more_body": False},
        ]
    )
    assert wire == [
        SSE_START,
        {"type": "http.response.body", "body": PRIMING + RESULT, "more_body": False},
    ]


def test_a_slow_call_still_gets_its_priming_event_first(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sseevents, "PRIMING_HOLD_S", 0.02)  # the suite waits 0.1 s, not 2.5
    wire = _written(
        [
            SSE_START,
            {"type": "http.response.body", "body": PRIMING, "more_body": True},
            {"type": "http.response.body", "body": RESULT, "more_body": False},
        ],
        pause=sseevents.PRIMING_HOLD_S * 5,
    )
    assert [m.get("body") for m in wire] == [None, PRIMING, RESULT]
    assert wire[1]["more_body"] is True and wire[2]["more_body"] is False


def test_a_json_response_is_not_held() -> None:
    start = {**SSE_START, "headers": [(b"content-type", b"application/json")]}
    body = {"type": "http.response.body", "body": b"{", "more_body": True}
    rest = {"type": "http.response.body", "body": b"}", "more_body": False}
    assert _written([start, body, rest]) == [start, body, rest]
