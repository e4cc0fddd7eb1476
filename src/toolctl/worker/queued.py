"""The queue worker: ``toolctl worker`` processes the background runs of a PostgreSQL history's
task queue (:mod:`toolctl.runtime.history.queue`), on any machine, until it is stopped.

A front end like the CLI and the server: each job it takes runs
:func:`toolctl.runtime.pipeline.handoff.run_job`, which claims the run and finishes it.

Procrastinate's worker loop stops with an error when the database goes away under it (a
restart, an outage, a full connection table: its job fetch or its listener's reconnection
fails); its running jobs are let finish first. The worker then starts the loop again once the
database answers (:func:`serve_queue`), so a routine database restart never leaves the queue
without its workers.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import signal
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.config import DEFAULT_APPROVAL_TTL_S
from toolctl.runtime.history.ownership import HOST
from toolctl.runtime.history.queue import LEASE_S, QUEUE, ensure_schema, make_app, sweeper
from toolctl.runtime.pipeline.handoff import run_job
from toolctl.runtime.redact import redact_text

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator

    from procrastinate import App

    from toolctl.runtime.history.postgres import PostgresStore

log = logging.getLogger("toolctl.worker")

# Seconds before the worker loop starts again after losing the database: doubled after each
# failed start, back to the first once a loop has run a minute.
RESTART_PAUSE = (0.5, 10.0)


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
    from toolctl.runtime.history.sqlite import open_store

    store: PostgresStore = open_store(url)  # type: ignore[assignment]
    ensure_schema(store)
    override = None if registry is None else registry_override(registry)
    stopping = Stopping()
    options = {
        "queues": [QUEUE],
        "concurrency": concurrency,
        "name": name or f"toolctl@{HOST}",
        "additional_context": {
            "toolctl_state": url,
            "toolctl_registry": override,
            "toolctl_lease": lease,
            "toolctl_stopping": stopping,
        },
        "shutdown_graceful_timeout": shutdown_timeout,
        "install_signal_handlers": False,  # Stopping takes the signals
        "delete_jobs": "successful",
    }
    stop = threading.Event()
    sweeping_thread = threading.Thread(
        target=sweeper,
        args=(lambda: store, lease / 2, stop, approval_ttl),
        name="toolctl-sweeper",
        daemon=True,
    )
    sweeping_thread.start()
    try:
        # Fetching, finishing and retrying jobs: one connection per job at once, one to spare.
        new_app = functools.partial(make_app, url, pool_max=concurrency + 1, job=run_job)
        serve_queue(new_app, options, stopping)
    finally:
        stop.set()
        sweeping_thread.join()


def serve_queue(new_app: Callable[[], App], options: dict[str, Any], stopping: Stopping) -> None:
    """Run Procrastinate's worker (on an app from ``new_app``) until a signal stops it; when
    it stops because the database went away, start it again (see the module doc)."""
    import asyncio

    import psycopg
    from procrastinate.exceptions import ConnectorException

    pause = RESTART_PAUSE[0]
    with stopping.on_signals():
        while not stopping.is_set():
            began = time.monotonic()
            try:
                asyncio.run(_work(new_app(), options, stopping))
                why: BaseException | None = None
            except (ConnectorException, psycopg.OperationalError) as exc:
                why = exc.__cause__ or exc
            if stopping.is_set():
                return
            if time.monotonic() - began > 60:
                pause = RESTART_PAUSE[0]
            log.warning(
                "the worker lost the task queue's database (%s); it starts again in %g s",
                _first_line(why),
                pause,
            )
            stopping.wait(pause)
            pause = min(pause * 2, RESTART_PAUSE[1])


def _first_line(exc: BaseException | None) -> str:
    if exc is None:
        return "its loop ended"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {redact_text(text.splitlines()[0] if text else '')}"


async def _work(app: App, options: dict[str, Any], stopping: Stopping) -> None:
    """One run of Procrastinate's worker; a stop signal cancels it, which is its graceful
    shutdown (running jobs get ``shutdown_graceful_timeout`` to finish)."""
    import asyncio

    with stopping.cancelling(asyncio.current_task()):
        try:
            async with app.open_async():
                await app.run_worker_async(**options)
        except asyncio.CancelledError:
            if not stopping.is_set():
                raise


class Stopping:
    """SIGTERM/SIGINT for the worker: the first sets this event (and cancels the running
    worker loop: a graceful shutdown); a second one has its default effect. Jobs read it to
    tell a shutdown from the loop stopping because the database went away."""

    def __init__(self) -> None:
        self._event = threading.Event()
        self._task: Any = None
        self._loop: Any = None

    def is_set(self) -> bool:
        return self._event.is_set()

    def wait(self, seconds: float) -> None:
        self._event.wait(seconds)

    @contextlib.contextmanager
    def on_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield  # (tests running a worker in a thread) no signals to take
            return
        before = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        for sig in before:
            signal.signal(sig, self._signalled)
        try:
            yield
        finally:
            for sig, handler in before.items():
                signal.signal(sig, handler)

    @contextlib.contextmanager
    def cancelling(self, task: Any) -> Iterator[None]:
        import asyncio

        self._task, self._loop = task, asyncio.get_running_loop()
        try:
            yield
        finally:
            self._task = self._loop = None

    def _signalled(self, signum: int, frame: Any) -> None:
        if self._event.is_set():  # the second signal: as if none were handled
            signal.signal(signum, signal.SIG_DFL)
            os.kill(os.getpid(), signum)
            return
        self._event.set()
        log.info("stopping: running jobs get their shutdown timeout to finish")
        task, loop = self._task, self._loop
        if task is not None and loop is not None:
            loop.call_soon_threadsafe(task.cancel)


def registry_override(registry: Path) -> dict[str, Any]:
    """The locator of the project ``worker --registry`` names: a project root, a tools directory
    or a tool file, as for every command."""
    from toolctl.config import find_project
    from toolctl.runtime.pipeline.start import project_locator

    return project_locator(find_project(registry))
