"""Running a :class:`ToolServer` over stdio or Streamable HTTP."""

from __future__ import annotations

import contextlib
import gc
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import anyio

from toolctl.server.app import ToolServer
from toolctl.server.security import BearerAuth, HttpSecurity, http_security
from toolctl.server.sessions import SessionLimits, bound_sessions
from toolctl.server.sseevents import resumable_streams
from toolctl.server.toolset import Selection, build_toolset

if TYPE_CHECKING:
    from toolctl.authconfig import AuthSettings
    from toolctl.registry import Registry
    from toolctl.server.reload import RegistryWatcher
    from toolctl.server.tokens import TokenVerifier

DEFAULT_MAX_BODY = 4 * 1024 * 1024


@dataclass(frozen=True)
class ServeOptions:
    """Everything ``toolctl serve`` takes besides the registry."""

    transport: str = "stdio"
    host: str = "127.0.0.1"
    port: int = 8000
    path: str = "/mcp"
    selection: Selection = field(default_factory=Selection)
    reload: bool = False
    reload_interval: float = 0.5
    allowed_hosts: tuple[str, ...] = ()
    allowed_origins: tuple[str, ...] = ()
    auth_token_env: str | None = None
    auth: AuthSettings | None = None  # OAuth: the authorization server whose JWTs are accepted
    max_request_bytes: int = DEFAULT_MAX_BODY
    sessions: SessionLimits = field(default_factory=SessionLimits)
    shutdown_timeout: float = 30.0
    name: str = "toolctl"
    forward_logging: bool = False
    trace_arguments: bool = False
    on_ready: Callable[[str], None] | None = field(default=None, compare=False)
    # --locked: raises ToolctlError for a registry that must not be served (checked on reload)
    verify: Callable[[Registry], None] | None = field(default=None, compare=False)


def prepare(registry: Registry, options: ServeOptions) -> tuple[ToolServer, HttpSecurity | None]:
    """Build the server, checking every option first (so a bad option fails before serving)."""
    security = None
    if options.transport == "http":
        security = http_security(
            options.host,
            options.allowed_hosts,
            options.allowed_origins,
            options.auth_token_env,
            oauth=options.auth is not None,
        )
    toolset = build_toolset(registry, options.selection)
    server = ToolServer(
        toolset,
        name=options.name,
        reload=options.reload,
        forward_logging=options.forward_logging,
        trace_arguments=options.trace_arguments,
    )
    return server, security


def serve(registry: Registry, options: ServeOptions) -> None:
    """Serve ``registry`` until the client disconnects (stdio) or the process is stopped."""
    server, security = prepare(registry, options)
    watcher = None
    if options.reload and registry.project is not None:
        from toolctl.server.reload import RegistryWatcher

        watcher = RegistryWatcher(
            server,
            registry.project,
            options.selection,
            options.reload_interval,
            options.verify,
            packs=registry.packs,
        )
    if security is None:
        anyio.run(serve_stdio, server, watcher, options)
    else:
        anyio.run(serve_http, server, watcher, options, security, backend_options=http_loop())


def freeze_startup_heap() -> None:
    """Leave what start-up built (modules, the registry, validators, the SDK's models) out of
    every later garbage collection.

    A full collection otherwise walks all of it, tens of milliseconds with the SDK loaded, and
    under load that showed as CPU per call and p99 latency (``bench/bench_http.py``). Collected
    first, so that no start-up garbage is kept for good.
    """
    from toolctl.yamlsrc import freeze_for_good

    gc.collect()
    freeze_for_good()


def http_loop() -> dict[str, Any]:
    """anyio's options for the HTTP server's event loop: uvloop where it is installed.

    Most of the CPU an HTTP call costs is event-loop and transport work (uvicorn, Starlette, the
    SDK's SSE streams), which uvloop's loop does for less (``bench/bench_http.py``).
    """
    import importlib.util

    if sys.platform != "win32" and importlib.util.find_spec("uvloop") is not None:
        return {"use_uvloop": True}
    return {}


@contextlib.contextmanager
def _stdout_to_stderr() -> Iterator[None]:
    # The SDK points fd 1 at stderr while serving; this also moves Python's own sys.stdout so
    # buffered print() output can never be flushed onto the wire when fd 1 is restored.
    saved = sys.stdout
    sys.stdout = sys.stderr
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            sys.stderr.flush()
        sys.stdout = saved


async def serve_stdio(
    server: ToolServer, watcher: RegistryWatcher | None, options: ServeOptions
) -> None:
    """Serve over the process's stdin/stdout (one client) until stdin closes."""
    from mcp.server.runner import serve_dual_era_loop

    from toolctl.server.stdio import stdio_streams

    low = server.lowlevel
    server.connection_attributes.transport = "stdio"
    async with stdio_streams() as (read, write), low.lifespan(low) as state:
        with _stdout_to_stderr():
            freeze_startup_heap()  # as for HTTP: no collection walks start-up's objects again
            if options.on_ready:
                options.on_ready("stdio")
            async with anyio.create_task_group() as tg:
                if watcher is not None:
                    tg.start_soon(watcher.run)
                # The client's first request chooses the revision (see ToolServer).
                await serve_dual_era_loop(
                    low, read, write, lifespan_state=state, init_options=server.init_options()
                )
                tg.cancel_scope.cancel()


def http_app(
    server: ToolServer,
    options: ServeOptions,
    security: HttpSecurity,
    verifier: TokenVerifier | None = None,
) -> Any:
    """The ASGI app: the SDK's Streamable HTTP app with explicit transport security, behind
    OAuth when ``verifier`` is given (``options.auth``)."""
    from mcp.server.transport_security import TransportSecuritySettings

    settings = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=list(security.allowed_hosts),
        allowed_origins=list(security.allowed_origins),
    )
    from toolctl.server.health import Lifecycle, store_check

    app: Any = server.lowlevel.streamable_http_app(
        streamable_http_path=options.path,
        transport_security=settings,
        host=options.host,
        max_request_body_size=options.max_request_bytes,
        max_sessions=options.sessions.max_sessions,
        session_idle_timeout=options.sessions.idle_timeout,
    )
    bound_sessions(server.lowlevel._session_manager, options.sessions.share)
    resumable_streams(server.lowlevel._session_manager)
    from toolctl.server.dispatch import Dispatch
    from toolctl.server.ratelimits import RateLimits

    scopes = None
    if verifier is not None:
        from toolctl.server.resource import ToolScopes

        scopes = ToolScopes(lambda: server.toolset, verifier.settings, options.path)
    # Host/Origin, the body's strict-wire check, tool scopes, rate limits, Retry-After: one
    # step, one read and one parse of the body (the scope check before the rate limit, so a
    # call the token may not make uses none of the caller's calls)
    limits = RateLimits(lambda: server.toolset)
    app = Dispatch(app, security, options.max_request_bytes, limits=limits, scopes=scopes)
    checks = [store_check(server.toolset.registry)]
    if security.token:
        app = BearerAuth(app, security.token)
    if verifier is not None:
        from toolctl.server.resource import ProtectedResource

        app = ProtectedResource(app, verifier, options.path, lambda: server.toolset)
        checks.append(verifier.keys.check_ready)  # /readyz: 503 saying why keys are missing
    return Lifecycle(app, *checks, drain_state=server.drain, max_body=options.max_request_bytes)


def token_verifier(options: ServeOptions) -> TokenVerifier | None:
    """The checker of the OAuth access tokens ``options.auth`` accepts (None without it)."""
    if options.auth is None:
        return None
    from toolctl.server.jwks import KeySet
    from toolctl.server.tokens import TokenVerifier

    return TokenVerifier(KeySet(options.auth))


async def serve_http(
    server: ToolServer,
    watcher: RegistryWatcher | None,
    options: ServeOptions,
    security: HttpSecurity,
) -> None:
    """Serve Streamable HTTP on ``options.host:options.port`` until stopped."""
    import uvicorn

    server.connection_attributes.transport = "http"
    verifier = token_verifier(options)
    app = http_app(server, options, security, verifier)
    config = uvicorn.Config(
        app,
        host=options.host,
        port=options.port,
        log_level="warning",
        access_log=False,
        lifespan="on",
        server_header=False,
        timeout_graceful_shutdown=max(1, round(options.shutdown_timeout)),
    )
    from toolctl.server.health import DrainingServer

    web = DrainingServer(config, app, options.shutdown_timeout)
    freeze_startup_heap()
    with lost_run_sweeper(server.toolset.registry):
        async with anyio.create_task_group() as tg:
            if watcher is not None:
                tg.start_soon(watcher.run)
            if verifier is not None:  # fetched before the first token arrives, and kept fresh
                tg.start_soon(verifier.keys.keep_fresh)
            tg.start_soon(_announce, web, options)
            await web.serve()
            tg.cancel_scope.cancel()


def lost_run_sweeper(registry: Registry) -> contextlib.AbstractContextManager[None]:
    """While serving a shared (PostgreSQL) history, sweep it for expired leases every half
    lease, taking turns with the other replicas and workers, so a killed replica's runs end
    even when no worker runs (:func:`toolctl.runtime.history.queue.sweeping`)."""
    from toolctl.config import DEFAULT_APPROVAL_TTL_S, approval_ttl
    from toolctl.runtime.history.heartbeat import foreground_lease
    from toolctl.runtime.history.queue import sweeping
    from toolctl.runtime.history.sqlite import state_location

    project = registry.project
    ttl = float(DEFAULT_APPROVAL_TTL_S)  # (checked when the project loaded)
    if project is not None:
        ttl = approval_ttl(project.settings, lambda: "toolctl.yaml: run")
    return sweeping(state_location(registry), foreground_lease() / 2, ttl)


async def _announce(web: Any, options: ServeOptions) -> None:
    while not web.started:
        await anyio.sleep(0.01)
    host, port = web.servers[0].sockets[0].getsockname()[:2]
    shown = f"[{host}]" if ":" in host else host
    url = f"http://{shown}:{port}{options.path}"
    if options.on_ready:
        options.on_ready(url)
