"""What a load balancer needs from ``toolctl serve --transport http``: liveness and readiness
endpoints, and a graceful shutdown on SIGTERM.

* ``GET /healthz``: 200 while the process serves (liveness).
* ``GET /readyz``: 200 when the run history answers (a PostgreSQL store is pinged, an SQLite one
  read), 503 otherwise, and 404 while draining, so a balancer stops sending calls to a replica
  that cannot record them or is going away (404, not 503, so that a balancer that can tell the
  two, such as HAProxy with ``http-check disable-on-404``, sends no new session here but keeps
  routing the sessions already here, whose in-flight calls may still need an answer).
* Draining (:meth:`Lifecycle.drain`, on the first SIGTERM or Ctrl-C): a request that would start a
  new session gets 503 with ``Retry-After`` (a balancer retries it on another replica), and so
  does every 2026-07-28 request (it has no session; any replica takes it, follow-ups included)
  and every new ``tools/call`` of a session already here (:mod:`toolctl.server.drain`); the
  rest of those sessions' traffic (an elicitation's answer, ``tools/list``) passes, so the calls
  in flight finish, up to a time limit; then the server stops. A call waiting for a background
  run answers at once with the run id; the run goes on on its worker. A second signal stops at
  once.

The endpoints answer a fixed word and nothing else (no version, no store address), in front of the
bearer-token check (a probe has no token) and of the Host/Origin checks (probes use the replica's
own address).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import anyio
import uvicorn

from toolctl.server.drain import Drain, read_body, refused_call

if TYPE_CHECKING:
    from toolctl.registry import Registry

PATHS = ("/healthz", "/readyz")
SESSION_REFUSAL = b"shutting down: this session takes no new calls; call again in a new session\n"
QUIET_S = 0.3  # draining ends after this long with no request in flight


def _in_session(scope: Any) -> bool:
    """A request of a session this replica already serves (it may finish its work here)."""
    return any(name == b"mcp-session-id" for name, _ in scope.get("headers") or ())


class Lifecycle:
    """ASGI middleware: :data:`PATHS`, the count of requests in flight, and draining."""

    def __init__(
        self,
        app: Any,
        check_ready: Callable[[], None],
        drain_state: Drain | None = None,
        max_body: int = 4 * 1024 * 1024,
    ) -> None:
        self.app = app
        self.check_ready = check_ready
        self.state = drain_state or Drain()
        self.max_body = max_body
        self.inflight = 0

    @property
    def draining(self) -> bool:
        """Whether this server is draining (see the module doc)."""
        return self.state.active

    @draining.setter
    def draining(self, value: bool) -> None:
        self.state.active = value

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
        elif scope.get("path") in PATHS:
            await self._probe(scope, send)
        elif scope.get("method") == "GET":
            # a long-lived event stream: it ends when the server stops, not by itself
            await self.app(scope, receive, send)
        elif self.draining and not _in_session(scope):
            await _answer(send, 503, b"shutting down\n", retry=True)
        else:
            self.inflight += 1
            try:
                if self.draining:  # a session here: its new calls are refused, the rest passes
                    body, receive = await read_body(receive, self.max_body)
                    if body is not None and refused_call(body):
                        await _answer(send, 503, SESSION_REFUSAL, retry=True)
                        return
                await self.app(scope, receive, send)
            finally:
                self.inflight -= 1

    async def _probe(self, scope: Any, send: Any) -> None:
        if scope.get("method") not in ("GET", "HEAD"):
            await _answer(send, 405, b"method not allowed\n")
        elif scope["path"] == "/healthz":
            await _answer(send, 200, b"ok\n")
        elif self.draining:  # 404: HAProxy's `http-check disable-on-404` keeps sessions here
            await _answer(send, 404, b"draining\n")
        elif await self._ready():
            await _answer(send, 200, b"ready\n")
        else:
            await _answer(send, 503, b"not ready\n")

    async def _ready(self) -> bool:
        if self.draining:
            return False
        try:
            with anyio.fail_after(5):
                await anyio.to_thread.run_sync(self.check_ready)
        except Exception:
            return False
        return True

    async def drain(self, timeout: float) -> None:
        """Refuse new sessions and wait (up to ``timeout`` seconds) until no request has been in
        flight for a moment (a client's follow-up, such as the ``tools/list`` an SDK client
        sends to check a result, comes right after its call)."""
        self.draining = True
        deadline = time.monotonic() + timeout
        quiet_since: float | None = None
        while time.monotonic() < deadline:
            now = time.monotonic()
            if self.inflight:
                quiet_since = None
            elif quiet_since is None:
                quiet_since = now
            elif now - quiet_since >= QUIET_S:
                return
            await anyio.sleep(0.05)


async def _answer(send: Any, status: int, body: bytes, *, retry: bool = False) -> None:
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode()),
        (b"cache-control", b"no-store"),
    ]
    if retry:
        headers += [(b"retry-after", b"1"), (b"connection", b"close")]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})


class DrainingServer(uvicorn.Server):
    """uvicorn's server, whose first SIGTERM/SIGINT drains (:meth:`Lifecycle.drain`) before it
    stops; a second signal stops it at once."""

    def __init__(self, config: uvicorn.Config, lifecycle: Lifecycle, timeout: float) -> None:
        super().__init__(config)
        self.lifecycle = lifecycle
        self.drain_timeout = timeout
        self.loop: asyncio.AbstractEventLoop | None = None

    async def serve(self, sockets: Any = None) -> None:
        from sse_starlette.sse import AppStatus

        # Event streams would end the moment the signal arrives, and the calls in flight
        # with them; they end when draining is over instead.
        AppStatus.disable_automatic_graceful_drain()  # type: ignore[no-untyped-call]
        self.loop = asyncio.get_running_loop()
        await super().serve(sockets)

    def handle_exit(self, sig: int, frame: Any) -> None:
        loop = self.loop
        if self.lifecycle.draining or loop is None:
            self._stop()
            return
        self.lifecycle.draining = True
        loop.call_soon_threadsafe(lambda: loop.create_task(self._drain()))

    async def _drain(self) -> None:
        await self.lifecycle.drain(self.drain_timeout)
        self._stop()

    def _stop(self) -> None:
        from sse_starlette.sse import AppStatus

        AppStatus.should_exit = True
        self.should_exit = True


def store_check(registry: Registry) -> Callable[[], None]:
    """A readiness check for the registry's run history (raises when it does not answer)."""

    def check() -> None:
        from toolctl.runtime.api import resolve_store

        store = resolve_store(registry)
        ping = getattr(store, "ping", None)
        if ping is not None:
            ping()
        else:
            store.query(limit=1)

    return check
