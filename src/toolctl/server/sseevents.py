"""Resumable SSE streams on 2025-11-25 Streamable HTTP (SEP-1699): each session keeps the last
events of its few latest request streams, so a client whose connection drops mid-call can
reconnect with ``Last-Event-ID`` and get what it missed.

With an event store, the SDK's transport opens every SSE stream with a priming event (an id and
empty data) carrying a ``retry`` field, as the revision recommends. The store is per session, not
shared: the SDK names a stream by its JSON-RPC request id, which every session reuses, and a
session's events must never replay into another's. It is bounded (``MAX_STREAMS`` streams of at
most ``MAX_EVENTS`` events each, the oldest dropped first) and goes away with the session.
2026-07-28 requests are stateless and never use it.
"""

from __future__ import annotations

import logging
from collections import OrderedDict, deque
from typing import Any

from mcp.server.streamable_http import EventCallback, EventMessage, EventStore

from toolctl.server.answers import answer_quickly

log = logging.getLogger("toolctl.server")

MAX_STREAMS = 8  # a session's latest request streams kept for a reconnect
MAX_EVENTS = 64  # the latest events kept per stream
RETRY_MS = 1000  # how long a client waits before it reconnects (the SSE retry field)

_Event = tuple[str, Any]  # (event id, JSON-RPC message or None for a priming event)


class SessionEvents(EventStore):
    """The events of one session's SSE streams (see the module docstring)."""

    def __init__(self, max_streams: int = MAX_STREAMS, max_events: int = MAX_EVENTS) -> None:
        self._streams: OrderedDict[str, deque[_Event]] = OrderedDict()
        self._max_streams = max_streams
        self._max_events = max_events
        self._count = 0

    async def store_event(self, stream_id: str, message: Any) -> str:
        """Keep ``message`` (None: the priming event that opens a stream); its event id."""
        self._count += 1
        event_id = str(self._count)
        events = self._streams.get(stream_id)
        if events is None or message is None:  # a new stream (a request id may come again)
            events = self._streams[stream_id] = deque(maxlen=self._max_events)
            while len(self._streams) > self._max_streams:
                self._streams.popitem(last=False)
        self._streams.move_to_end(stream_id)
        events.append((event_id, message))
        return event_id

    async def replay_events_after(
        self, last_event_id: str, send_callback: EventCallback
    ) -> str | None:
        """Send the events of ``last_event_id``'s stream that came after it; the stream's id,
        or None when the event is no longer kept (the client then calls again)."""
        for stream_id, events in self._streams.items():
            ids = [event_id for event_id, _ in events]
            if last_event_id not in ids:
                continue
            for event_id, message in list(events)[ids.index(last_event_id) + 1 :]:
                if message is not None:
                    await send_callback(EventMessage(message, event_id))
            return stream_id
        return None


def resumable_streams(manager: Any) -> None:
    """Give each new session of the SDK's session manager its own :class:`SessionEvents` (and
    the ``retry`` hint), so its SSE streams open with a priming event and can be resumed, and
    answer its quick requests in one JSON body (:mod:`toolctl.server.answers`)."""
    admit = getattr(manager, "_admit_session", None)
    if admit is None:
        log.warning("this mcp SDK cannot keep SSE events per session: streams are not resumable")
        return

    def admit_resumable(requestor: Any) -> Any:
        transport = admit(requestor)
        if transport is not None and hasattr(transport, "_event_store"):
            transport._event_store = SessionEvents()
            transport._retry_interval = RETRY_MS
            answer_quickly(transport)
        return transport

    manager._admit_session = admit_resumable
