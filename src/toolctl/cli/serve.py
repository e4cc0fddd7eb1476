"""``toolctl serve``: the registry as an MCP server over stdio or Streamable HTTP."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated, Any

import typer

from toolctl.cli import exitcodes
from toolctl.cli.options import (
    LockedOpt,
    PacksOpt,
    RegistryOpt,
    ShutdownTimeoutOpt,
    ToolsArg,
    split_targets,
    tag_option,
    tool_option,
)


class Transport(str, enum.Enum):
    """How clients reach the server."""

    stdio = "stdio"
    http = "http"


class LogLevel(str, enum.Enum):
    """The server log's level on stderr."""

    debug = "debug"
    info = "info"
    warning = "warning"
    error = "error"


# Options that only an HTTP server uses: given with stdio, they would be ignored silently.
_HTTP_ONLY = (
    "host",
    "port",
    "allowed_host",
    "allowed_origin",
    "auth_token_env",
    "max_request_bytes",
    "max_sessions",
    "max_sessions_per_principal",
    "session_idle_timeout",
)


def _refuse_http_options_on_stdio(ctx: typer.Context, transport: Transport) -> None:
    if transport is not Transport.stdio:
        return
    given = [
        param.opts[0]
        for param in ctx.command.params
        if param.name in _HTTP_ONLY
        and getattr(ctx.get_parameter_source(param.name), "name", "") == "COMMANDLINE"
    ]
    if given:
        raise typer.BadParameter(
            f"{', '.join(given)} {'applies' if len(given) == 1 else 'apply'} only to "
            "--transport http; add --transport http, or leave "
            f"{'it' if len(given) == 1 else 'them'} out to serve on stdio"
        )


def serve(
    ctx: typer.Context,
    targets: ToolsArg = None,
    registry: RegistryOpt = None,
    transport: Annotated[
        Transport,
        typer.Option(
            "--transport",
            metavar="stdio|http",
            help="stdio (a client starts toolctl) or http (Streamable HTTP).",
        ),
    ] = Transport.stdio,
    host: Annotated[
        str, typer.Option("--host", metavar="ADDRESS", help="HTTP bind address.")
    ] = "127.0.0.1",
    port: Annotated[
        int,
        typer.Option(
            "--port", min=0, max=65535, metavar="PORT", help="HTTP port (0 picks a free one)."
        ),
    ] = 8000,
    tool: Annotated[list[str] | None, tool_option("Serve only this tool (repeatable).")] = None,
    tag: Annotated[
        list[str] | None, tag_option("Serve only tools with this tag (repeatable).")
    ] = None,
    packs: PacksOpt = True,
    reload: Annotated[
        bool, typer.Option("--reload", help="Watch the tool files; swap in valid changes.")
    ] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-host",
            metavar="HOST",
            help="Host header clients use (required off loopback; repeatable).",
        ),
    ] = None,
    allowed_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-origin",
            metavar="ORIGIN",
            help="Browser Origin to accept, e.g. https://app.example.com (repeatable).",
        ),
    ] = None,
    auth_token_env: Annotated[
        str | None,
        typer.Option(
            "--auth-token-env",
            metavar="VAR",
            help="Require 'Authorization: Bearer $VAR' (required off loopback).",
        ),
    ] = None,
    max_request_bytes: Annotated[
        int,
        typer.Option(
            "--max-request-bytes",
            min=1,
            metavar="BYTES",
            help="Largest HTTP request body (413 above).",
        ),
    ] = 4 * 1024 * 1024,
    max_sessions: Annotated[
        int | None,
        typer.Option(
            "--max-sessions",
            min=1,
            metavar="N",
            help="Most open 2025-11-25 sessions; when full the longest-idle one is expired "
            "[default: serve.maxSessions or 1000].",
        ),
    ] = None,
    max_sessions_per_principal: Annotated[
        int | None,
        typer.Option(
            "--max-sessions-per-principal",
            min=1,
            metavar="N",
            help="Most sessions one caller (principal; every unauthenticated client counts as "
            "one) may hold [default: serve.maxSessionsPerPrincipal or a quarter of "
            "--max-sessions, at least 2].",
        ),
    ] = None,
    session_idle_timeout: Annotated[
        float | None,
        typer.Option(
            "--session-idle-timeout",
            min=0.001,
            metavar="SECONDS",
            help="A session idle this long expires [default: serve.sessionIdleTimeout or 300].",
        ),
    ] = None,
    shutdown_timeout: ShutdownTimeoutOpt = 30.0,
    forward_logging: Annotated[
        bool,
        typer.Option(
            "--forward-logging",
            help="Also send the Python logging records a tool writes to the client.",
        ),
    ] = False,
    trace_arguments: Annotated[
        bool,
        typer.Option(
            "--trace-arguments",
            help="Put tool arguments (redacted as in the run history) on OpenTelemetry spans.",
        ),
    ] = False,
    log_level: Annotated[
        LogLevel,
        typer.Option(
            "--log-level",
            metavar="debug|info|warning|error",
            help="Server log level on stderr.",
        ),
    ] = LogLevel.warning,
    search: Annotated[
        bool | None,
        typer.Option(
            "--search/--no-search",
            help="List the eager tools plus search_tools and call_tool; deferred tools are "
            "found by search (and stay callable by name) [default: serve.search or off].",
            show_default=False,
        ),
    ] = None,
    locked: LockedOpt = False,
) -> None:
    """Serve the registry's enabled tools to MCP clients (protocols 2026-07-28 and 2025-11-25).

    `toolctl serve` serves every enabled tool; `toolctl serve NAME...` only those.

    Every call goes through the same pipeline as `toolctl run`: validation, approval (asked
    through the client's elicitation when it supports it), suspend/resume and the run history.
    With --locked, --reload swaps in only a registry that still matches toolctl.lock.
    """
    import logging
    import sys

    from toolctl.cli.render import print_diagnostics, print_error
    from toolctl.errors import ToolctlError
    from toolctl.server import require_sdk

    _refuse_http_options_on_stdio(ctx, transport)
    require_sdk()
    from toolctl.cli.registries import fix_hint, load, require_tool
    from toolctl.server.run import ServeOptions, serve
    from toolctl.server.security import ServeUsageError
    from toolctl.server.toolset import Selection

    logging.basicConfig(
        stream=sys.stderr,
        level=log_level.value.upper(),
        format="toolctl serve: %(levelname)s: %(message)s",
    )
    for handler in logging.getLogger().handlers:  # tool lines sent to clients stay off stderr
        handler.setLevel(log_level.value.upper())
    from toolctl.runtime.redact import guard_log_handlers

    guard_log_handlers()  # a handler's own log lines are scrubbed of its secrets too
    names, paths = split_targets(targets)
    tool = [*names, *(tool or [])] or None
    loaded = load(registry, paths, packs=packs)
    print_diagnostics(loaded.diagnostics)
    if not loaded.ok:
        print_error(
            ToolctlError(
                "not serving a registry with errors",
                hint=fix_hint(loaded, "fix them (toolctl validate) and start again"),
            )
        )
        raise typer.Exit(exitcodes.FINDINGS)
    for name in names:  # an unknown name is a usage error with "did you mean", as for run
        require_tool(loaded, name, "serve")
    verify = None
    if locked:
        from toolctl.contract import verify_locked

        verify_locked(loaded)  # a LockError exits 1 with every change listed
        verify = verify_locked

    def ready(where: str) -> None:
        count = len(loaded.select(tool, tag))
        note = " (no enabled tool matches --tool/--tag)" if not count and (tool or tag) else ""
        # the address stays last on the line: scripts and tests read it from there
        how = " behind search_tools and call_tool" if search else ""
        sys.stderr.write(f"toolctl: serving {count} tool(s){how} on {where}{note}\n")
        sys.stderr.flush()

    from toolctl.server.sessions import session_limits

    section = loaded.project.section("serve") if loaded.project is not None else {}
    try:
        sessions = session_limits(
            section, max_sessions, session_idle_timeout, max_sessions_per_principal
        )
    except ToolctlError as exc:
        print_error(exc)
        raise typer.Exit(exitcodes.USAGE) from None
    if search is None:
        where = loaded.project.config_file if loaded.project is not None else None
        search = _search_setting(section, where)
    options = ServeOptions(
        transport=transport.value,
        host=host,
        port=port,
        selection=Selection(tuple(tool or ()), tuple(tag or ()), search=search),
        reload=reload,
        allowed_hosts=tuple(allowed_host or ()),
        allowed_origins=tuple(allowed_origin or ()),
        auth_token_env=auth_token_env,
        max_request_bytes=max_request_bytes,
        sessions=sessions,
        shutdown_timeout=shutdown_timeout,
        forward_logging=forward_logging,
        trace_arguments=trace_arguments,
        on_ready=ready,
        verify=verify,
    )
    try:
        serve(loaded, options)
    except ServeUsageError as exc:
        print_error(exc)
        raise typer.Exit(exitcodes.USAGE) from None


def _search_setting(section: dict[str, Any], config_file: Path | None) -> bool:
    """``serve.search`` of toolctl.yaml (default off); a non-boolean is a usage error."""
    value = section.get("search", False)
    if not isinstance(value, bool):
        from toolctl.config import setting_location
        from toolctl.errors import UsageError

        raise UsageError(
            f"{setting_location(config_file, 'serve')}: serve.search must be true or false, "
            f"not {value!r}",
            hint="write serve: {search: true}, or pass --search",
        )
    return value


def register(app: typer.Typer) -> None:
    """Add ``serve`` to ``app``."""
    app.command("serve")(serve)
