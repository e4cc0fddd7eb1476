"""The queue worker: ``toolctl worker`` processes the background runs of a PostgreSQL history's
task queue (:mod:`toolctl.runtime.history.queue`), on any machine, until it is stopped.

A front end like the CLI and the server: each job it takes runs
:func:`toolctl.runtime.pipeline.handoff.run_job`, which claims the run and finishes it.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.config import DEFAULT_APPROVAL_TTL_S
from toolctl.runtime.history.ownership import HOST
from toolctl.runtime.history.queue import LEASE_S, QUEUE, ensure_schema, make_app, sweeper
from toolctl.runtime.pipeline.handoff import run_job

if TYPE_CHECKING:
    from toolctl.runtime.history.postgres import PostgresStore


def run_worker(
    url: str,
    *,
    concurrency: int = 1,
    lease: float = LEASE_S,
    shutdown_timeout: float = 30.0,
    name: str | None = None,
    registry: Path | None = None,
    approval_ttl: float = DEFAULT_APPROVAL_TTL_S,
) -> None:
    """Process queue jobs until SIGTERM/SIGINT (then finish running jobs within
    ``shutdown_timeout`` seconds, and abort the rest), sweeping for lost runs meanwhile (with
    the :func:`~toolctl.runtime.history.queue.housekeeping` of pending runs older than
    ``approval_ttl`` and of the queue).

    ``registry``: load tools from this project (a tools path or project root) instead of the
    path recorded by the process that started each run (for workers on other machines)."""
    import asyncio

    from toolctl.runtime.history.sqlite import open_store

    store: PostgresStore = open_store(url)  # type: ignore[assignment]
    ensure_schema(store)
    override = None if registry is None else registry_override(registry)
    # Fetching, finishing and retrying jobs: one connection per job at once, one to spare.
    app = make_app(url, pool_max=concurrency + 1, job=run_job)
    stop = threading.Event()
    sweeping_thread = threading.Thread(
        target=sweeper,
        args=(lambda: store, lease / 2, stop, approval_ttl),
        name="toolctl-sweeper",
        daemon=True,
    )
    sweeping_thread.start()

    async def main() -> None:
        async with app.open_async():
            await app.run_worker_async(
                queues=[QUEUE],
                concurrency=concurrency,
                name=name or f"toolctl@{HOST}",
                additional_context={
                    "toolctl_state": url,
                    "toolctl_registry": override,
                    "toolctl_lease": lease,
                },
                shutdown_graceful_timeout=shutdown_timeout,
                install_signal_handlers=True,
                delete_jobs="successful",
            )

    try:
        asyncio.run(main())
    finally:
        stop.set()
        sweeping_thread.join()


def registry_override(registry: Path) -> dict[str, Any]:
    """The locator of the project ``worker --registry`` names: a project root, a tools directory
    or a tool file, as for every command."""
    from toolctl.config import find_project
    from toolctl.runtime.pipeline.start import project_locator

    return project_locator(find_project(registry))
