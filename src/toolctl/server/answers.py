"""How a request in a 2025-11-25 session is answered: a quick one in one JSON body, one that
streams on an SSE stream (opening with the priming event that makes it resumable).

Streamable HTTP lets the server answer a POST either way when the client accepts both
(``Accept: application/json, text/event-stream``; the SDK's transport refuses a POST that does
not). The SDK's transport chooses once, for every request: an SSE stream, which costs a
response object with four tasks of its own, a writer task, a second memory stream and a chunk
per event (``bench/bench_http.py`` under wrk put that at a quarter of a 2025-11-25 call's
server CPU, where a 2026-07-28 call answers plain JSON), or JSON only, which drops whatever the
call sends before its result (progress, logs) and cannot carry a request to the client
(elicitation).

:class:`QuickAnswers` decides per request instead. The request is dispatched, then the first
message the server sends for it is awaited for up to ``QUICK_ANSWER_S``:

* the result (or error) comes first: it is the whole answer, one JSON body;
* anything else comes first (a notification, a request to the client): the SSE stream opens with
  its priming event, then that message, then the rest as they come;
* nothing comes in time: the stream opens with its priming event alone, so a client whose
  connection drops during a long call can reconnect with ``Last-Event-ID``
  (:mod:`toolctl.server.sseevents`).

The priming event's id is taken before dispatch, as the SDK does, so the event store's order is
the wire's. A quick answer loses no resumability: a client disconnected before it would not
have had an event id to resume from either (the priming event used to be held that long to go
out in the same write as the result). Everything else (``initialize``, notifications, malformed
bodies, refusals) is the SDK's own path, unchanged.
"""

from __future__ import annotations

import logging
from contextlib import suppress
from functools import partial
from http import HTTPStatus
from typing import Any

import anyio
import pydantic_core
from mcp.server.streamable_http import (
    CONTENT_TYPE_SSE,
    MCP_SESSION_ID_HEADER,
    REQUEST_STREAM_BUFFER_SIZE,
    EventMessage,
    StreamableHTTPServerTransport,
    check_accept_headers,
)
from mcp.shared.inbound import MCP_PROTOCOL_VERSION_HEADER
from mcp_types import (
    DEFAULT_NEGOTIATED_VERSION,
    INTERNAL_ERROR,
    JSONRPCError,
    JSONRPCRequest,
    JSONRPCResponse,
    jsonrpc_message_adapter,
)
from pydantic import ValidationError
from sse_starlette import EventSourceResponse

log = logging.getLogger("toolctl.server")

# How long a request's answer may take and still go out as one JSON body. Past it, the SSE
# stream opens with its priming event. Under load a quick call's result comes tens of
# milliseconds after its dispatch (the other connections' requests are served in between);
# half a second keeps nearly all of them one JSON body at 50 connections on 2 cores.
QUICK_ANSWER_S = 0.5

_CLOSED = (anyio.EndOfStream, anyio.ClosedResourceError)
_SSE_HEADERS = {
    "Cache-Control": "no-cache, no-transform",
    "Connection": "keep-alive",
    "Content-Type": CONTENT_TYPE_SSE,
}


class QuickAnswers(StreamableHTTPServerTransport):
    """The SDK's session transport, answering each request as the module doc says."""

    async def _handle_post_request(self, scope: Any, request: Any, receive: Any, send: Any) -> None:
        message = await self._plain_request(request)
        if message is None:  # initialize, a notification, a malformed or refused POST
            await super()._handle_post_request(scope, request, receive, send)
            return
        if not await self._validate_request_headers(request, send):
            return
        try:
            await self._answer(scope, request, message, send)
        except Exception as err:  # as the SDK's own POST handler does
            log.exception("Error handling POST request")
            response = self._create_error_response(
                "Error handling POST request", HTTPStatus.INTERNAL_SERVER_ERROR, INTERNAL_ERROR
            )
            await response(scope, request.receive, send)
            writer = self._read_stream_writer
            if writer is not None:
                await writer.send(Exception(err))

    async def _plain_request(self, request: Any) -> JSONRPCRequest | None:
        """The POST's JSON-RPC request when it is one this class answers (not ``initialize``,
        from a client accepting both kinds of answer, well formed); else None."""
        has_json, has_sse = check_accept_headers(request)
        if not (has_json and has_sse and self._check_content_type(request)):
            return None
        try:
            message = jsonrpc_message_adapter.validate_python(
                pydantic_core.from_json(await request.body()), by_name=False
            )
        except (ValueError, ValidationError):  # the SDK's path answers it with the right error
            return None
        if not isinstance(message, JSONRPCRequest) or message.method == "initialize":
            return None
        return message

    async def _answer(self, scope: Any, request: Any, message: JSONRPCRequest, send: Any) -> None:
        writer = self._read_stream_writer
        if writer is None:  # pragma: no cover - connect() runs before any request is routed
            raise RuntimeError("the session's transport is not connected")
        request_id = str(message.id)
        version = request.headers.get(MCP_PROTOCOL_VERSION_HEADER, DEFAULT_NEGOTIATED_VERSION)
        priming = await self._mint_priming_event(request_id, version)
        streams = anyio.create_memory_object_stream[EventMessage](REQUEST_STREAM_BUFFER_SIZE)
        self._request_streams[request_id] = streams
        reader = streams[1]
        await writer.send(self._create_session_message(message, request, request_id, version))
        first: EventMessage | None = None
        # a stream closed meanwhile (close_sse_stream, the session ending): the SSE path
        # answers with the priming event alone, as the SDK's would
        with anyio.move_on_after(QUICK_ANSWER_S), suppress(*_CLOSED):
            first = await reader.receive()
        if first is not None and isinstance(first.message, JSONRPCResponse | JSONRPCError):
            await self._clean_up_memory_streams(request_id)
            await self._create_json_response(first.message)(scope, request.receive, send)
            return
        await self._stream(scope, request, request_id, priming, first, send)

    async def _stream(
        self,
        scope: Any,
        request: Any,
        request_id: str,
        priming: dict[str, Any] | None,
        first: EventMessage | None,
        send: Any,
    ) -> None:
        """Answer on an SSE stream: the priming event, ``first``, then what follows."""
        sse_writer, sse_reader = anyio.create_memory_object_stream[dict[str, Any]](0)
        self._sse_stream_writers[request_id] = sse_writer
        streams = self._request_streams.get(request_id)  # None: closed while waiting
        headers = dict(_SSE_HEADERS)
        if self.mcp_session_id:
            headers[MCP_SESSION_ID_HEADER] = self.mcp_session_id
        response = EventSourceResponse(
            content=sse_reader,
            data_sender_callable=partial(
                self._write_events, request_id, sse_writer, priming, first, streams
            ),
            headers=headers,
        )
        try:
            await response(scope, request.receive, send)
        except Exception:
            log.exception("SSE response error")
            await sse_writer.aclose()
            await self._clean_up_memory_streams(request_id)
        finally:
            await sse_reader.aclose()

    async def _write_events(
        self,
        request_id: str,
        sse_writer: Any,
        priming: dict[str, Any] | None,
        first: EventMessage | None,
        streams: Any,
    ) -> None:
        try:
            if priming is not None:
                await sse_writer.send(priming)
            if first is not None:
                await sse_writer.send(self._create_event_data(first))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            # the client went away: the rest is still stored for it to resume
            await self._clean_up_memory_streams(request_id)
            streams = None
        if streams is None:  # or closed while waiting (close_sse_stream): the client resumes
            await sse_writer.aclose()
            self._sse_stream_writers.pop(request_id, None)
            return
        # The SDK's writer forwards the rest and cleans up, as for a stream it opened itself.
        await self._run_sse_writer(request_id, sse_writer, streams[1], None)


def answer_quickly(transport: Any) -> None:
    """Make ``transport`` (one session's, just created by the SDK) a :class:`QuickAnswers`."""
    if type(transport) is StreamableHTTPServerTransport:
        # The SDK builds the transport itself; its class is swapped rather than the SDK's
        # admission copied. QuickAnswers adds methods only, no state.
        transport.__class__ = QuickAnswers
