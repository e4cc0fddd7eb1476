"""``toolctl serve``: the registry as an MCP server over stdio or Streamable HTTP."""

from __future__ import annotations

import enum
from pathlib import Path
from typing import Annotated

import typer

from toolctl.cli import exitcodes


class Transport(str, enum.Enum):
    """How clients reach the server."""

    stdio = "stdio"
    http = "http"


def serve(
    path: Annotated[Path | None, typer.Argument(help="Tool file or directory.")] = None,
    transport: Annotated[
        Transport,
        typer.Option("--transport", "-t", help="stdio (a client starts toolctl) or http."),
    ] = Transport.stdio,
    host: Annotated[str, typer.Option("--host", help="HTTP bind address.")] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="HTTP port (0 picks a free one).")] = 8000,
    tool: Annotated[
        list[str] | None, typer.Option("--tool", help="Serve only this tool (repeatable).")
    ] = None,
    tag: Annotated[
        list[str] | None, typer.Option("--tag", help="Serve only tools with this tag (repeatable).")
    ] = None,
    reload: Annotated[
        bool, typer.Option("--reload", help="Watch the tool files; swap in valid changes.")
    ] = False,
    allowed_host: Annotated[
        list[str] | None,
        typer.Option("--allowed-host", help="Host header clients use (required off loopback)."),
    ] = None,
    allowed_origin: Annotated[
        list[str] | None,
        typer.Option(
            "--allowed-origin", help="Browser Origin to accept (https://app.example.com)."
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
        int, typer.Option("--max-request-bytes", help="Largest HTTP request body (413 above).")
    ] = 4 * 1024 * 1024,
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
        str, typer.Option("--log-level", help="Server log on stderr: debug, info, warning, error.")
    ] = "warning",
) -> None:
    """Serve the registry's enabled tools to MCP clients (protocols 2026-07-28 and 2025-11-25).

    Every call goes through the same pipeline as `toolctl run`: validation, approval (asked
    through the client's elicitation when it supports it), suspend/resume and the run history.
    """
    import logging
    import sys

    from toolctl.cli.render import print_diagnostics, print_error
    from toolctl.errors import ToolctlError
    from toolctl.server import require_sdk

    require_sdk()
    from toolctl.loader import load_registry
    from toolctl.server.run import ServeOptions, serve
    from toolctl.server.security import ServeUsageError
    from toolctl.server.toolset import Selection

    logging.basicConfig(
        stream=sys.stderr,
        level=log_level.upper(),
        format="toolctl serve: %(levelname)s: %(message)s",
    )
    for handler in logging.getLogger().handlers:  # tool lines sent to clients stay off stderr
        handler.setLevel(log_level.upper())
    registry = load_registry(path)
    print_diagnostics(registry.diagnostics)
    if not registry.ok:
        print_error(
            ToolctlError(
                "not serving a registry with errors",
                hint="fix them (toolctl validate) and start again",
            )
        )
        raise typer.Exit(exitcodes.FINDINGS)

    def ready(where: str) -> None:
        count = len(registry.select(tool, tag))
        note = " (no enabled tool matches --tool/--tag)" if not count and (tool or tag) else ""
        sys.stderr.write(f"toolctl: serving {count} tool(s) on {where}{note}\n")
        sys.stderr.flush()

    options = ServeOptions(
        transport=transport.value,
        host=host,
        port=port,
        selection=Selection(tuple(tool or ()), tuple(tag or ())),
        reload=reload,
        allowed_hosts=tuple(allowed_host or ()),
        allowed_origins=tuple(allowed_origin or ()),
        auth_token_env=auth_token_env,
        max_request_bytes=max_request_bytes,
        forward_logging=forward_logging,
        trace_arguments=trace_arguments,
        on_ready=ready,
    )
    try:
        serve(registry, options)
    except ServeUsageError as exc:
        print_error(exc)
        raise typer.Exit(exitcodes.USAGE) from None


def register(app: typer.Typer) -> None:
    """Add ``serve`` to ``app``."""
    app.command("serve")(serve)
