"""``toolctl worker``: execute background runs from the PostgreSQL task queue."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Annotated

import typer

from toolctl.cli import exitcodes
from toolctl.cli.options import RegistryOpt, ShutdownTimeoutOpt, StateOpt


def register(app: typer.Typer) -> None:
    app.command("worker")(worker)


def worker(
    registry_path: RegistryOpt = None,
    state: StateOpt = None,
    concurrency: Annotated[
        int,
        typer.Option("--concurrency", min=1, metavar="N", help="Runs executed at once (threads)."),
    ] = 1,
    lease: Annotated[
        float,
        typer.Option(
            "--lease",
            min=1,
            metavar="SECONDS",
            help="Seconds without a heartbeat after which a run is taken for lost "
            "(renewed every third of it).",
        ),
    ] = 30.0,
    shutdown_timeout: ShutdownTimeoutOpt = 30.0,
) -> None:
    """Execute background runs from the task queue of a PostgreSQL run history.

    Runs as many workers as you like, on any machine that has the project at the same path (or
    give --registry): each run is taken by one worker. SIGTERM or Ctrl-C stops taking new runs
    and lets running ones finish for --shutdown-timeout seconds. Imports and runs tool handlers.
    """
    from toolctl.cli.options import project_of
    from toolctl.cli.registries import state_store
    from toolctl.cli.render import print_error
    from toolctl.config import approval_ttl
    from toolctl.runtime.history.sqlite import is_url
    from toolctl.worker.queued import run_worker

    store = state_store(registry_path, state)
    ttl = approval_ttl(project_of(registry_path).settings, lambda: "toolctl.yaml: run")
    queue = store.capabilities.queue
    if queue is None or not is_url(queue.url):
        from toolctl.errors import UsageError

        print_error(
            UsageError(
                f"toolctl worker needs a PostgreSQL run history; this project's is {store.path}",
                hint="set state: postgresql://... in toolctl.yaml or TOOLCTL_STATE "
                "(with an SQLite history, background runs start their own worker process)",
            )
        )
        raise typer.Exit(exitcodes.USAGE)
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s: %(message)s")
    logging.getLogger("procrastinate").setLevel(logging.WARNING)
    from toolctl.runtime.redact import guard_log_handlers

    guard_log_handlers()  # a handler's own log lines are scrubbed of its secrets too
    override = None if registry_path is None else Path(registry_path)
    run_worker(
        queue.url,
        concurrency=concurrency,
        lease=lease,
        shutdown_timeout=shutdown_timeout,
        registry=override,
        approval_ttl=ttl,
    )
