"""The per-session SSE event store (2025-11-25 Streamable HTTP resumability, SEP-1699): what a
client reconnecting with Last-Event-ID gets back. Over HTTP, the conformance suite's
server-sse-polling scenario checks the priming event and the retry field
(tests/server/test_node_clients.py); which answers are streamed, tests/server/test_answers.py."""

from __future__ import annotations

from typing import Any

import anyio

from toolctl.server.sseevents import SessionEvents


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
