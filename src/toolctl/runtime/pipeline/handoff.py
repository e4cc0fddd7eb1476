"""Continuing a run handed off to a background worker: on this machine (a local worker process,
:mod:`toolctl.worker.local`) or taken from the task queue (:func:`run_job`, the Procrastinate
task a ``toolctl worker`` runs, :mod:`toolctl.worker.queued`).

The spawning call stored the run ``running`` with a hand-off token as owner
(:mod:`toolctl.runtime.execution.background`); :func:`prepare` builds the :class:`Call` that
continues it (after checking the owner, loading the registry and verifying the stored data's
binding) and :func:`finish` executes it to its end.
"""

from __future__ import annotations

import logging
import secrets
from typing import TYPE_CHECKING, Any

from toolctl.runtime.errors import DatabaseUnavailableError
from toolctl.runtime.history import heartbeat, ledger
from toolctl.runtime.history.ownership import HOST
from toolctl.runtime.history.queue import LEASE_S
from toolctl.runtime.pipeline.call import Call, RunCancelled
from toolctl.runtime.redact import redact_text
from toolctl.runtime.result import ErrorCode
from toolctl.runtime.sync import run_sync

if TYPE_CHECKING:
    from collections.abc import Callable

    from toolctl.registry import Registry
    from toolctl.runtime.history.records import RunStore

log = logging.getLogger("toolctl.worker")


def _fail(store: RunStore, run_id: str, token: str, message: str) -> None:
    error = {"code": ErrorCode.HANDLER_ERROR.value, "message": redact_text(message), "details": []}
    ledger.fail_owned(store, run_id, token, error)


def load_registry_at(locator: dict[str, Any]) -> Registry:
    """The registry a run was started from (its project root and tool paths)."""
    from toolctl.config import project_at
    from toolctl.loader import load_registry

    # The tool paths the caller used (its config's, or an explicit --registry path).
    return load_registry(project=project_at(locator["root"], tools=locator["tools"]))


def prepare(
    store: RunStore, run_id: str, token: str, locator: dict[str, Any] | None = None
) -> Call | None:
    """The :class:`Call` that continues run ``run_id`` owned by ``token`` (None: it is not
    ``running`` under that owner any more, or it cannot run — its registry failed to load or
    its stored data no longer matches its binding — and then ended ``failed``)."""
    from toolctl.runtime.history import binding
    from toolctl.runtime.options import CallOptions
    from toolctl.runtime.pipeline.start import site_of

    rec = store.get(run_id)
    if rec.status != "running" or rec.owner != token:
        return None  # cancelled before we started, or another worker has it
    locator = locator or rec.registry or {}
    try:
        registry = load_registry_at(locator)
        spec = registry.get(rec.tool)
        site = site_of(registry)
    except Exception as exc:
        _fail(store, run_id, token, f"the worker could not load the registry: {exc}")
        return None
    if not binding.verify(store, rec):
        _fail(store, run_id, token, "the stored data of the run was modified; it will not run")
        return None
    return Call.continue_pending(rec, spec, store, site, CallOptions(store=store), owner=token)


def finish(call: Call) -> int:
    """Execute a prepared call to its end; 130 when it was cancelled."""
    try:
        run_sync(call.execute(), call.cancelled_error)
    except RunCancelled:
        return 130
    return 0


def run_job(context: Any, run_id: str, token: str) -> None:
    """The queue's task (:data:`~toolctl.runtime.history.queue.TASK`): claim run ``run_id``
    from ``token`` and finish it (see :mod:`toolctl.runtime.history.queue`).

    From the claim until the handler starts, a database that goes away (a restart, an
    outage) is waited out here, not by a retry of the job: once claimed, the run is this
    job's, and a retried job could not claim it again (the claim is a compare-and-set from
    ``token``), so the run would stay ``running`` under a process that no longer runs it."""
    from toolctl.runtime.history.sqlite import open_store

    url = context.additional_context["toolctl_state"]
    store = open_store(url)  # before any claim: a failure here is retried by the queue
    mine = f"worker-{secrets.token_hex(8)}"
    lease = float(context.additional_context.get("toolctl_lease", LEASE_S))
    locator = context.additional_context.get("toolctl_registry")
    # the worker shutting down, not its loop stopping because the database went away
    # (then the loop waits for this job, and the claimed run must not be abandoned)
    shutdown = context.additional_context.get("toolctl_stopping")
    stopping = shutdown.is_set if shutdown is not None else context.should_abort
    call = waiting_out_outages(
        run_id, lambda: claim_and_prepare(store, run_id, token, mine, lease, locator), stopping
    )
    if call is None:
        heartbeat.release(run_id)  # held from a claim that is not to be run after all
        return
    execute_prepared(store, call, mine, lease)


def waiting_out_outages(
    run_id: str, step: Callable[[], Call | None], stopping: Callable[[], bool]
) -> Call | None:
    """``step()``, again after a pause each time the database is unavailable, until it
    answers or ``stopping()`` (the worker shuts down: the run is left to the sweeps, which see
    this process gone; None)."""
    from toolctl.runtime.history.patience import while_unavailable

    try:
        return while_unavailable(step, stopping, what=f"run {run_id}")
    except DatabaseUnavailableError:
        log.warning("run %s: the worker stops while the database is away", run_id)
        return None


def claim_and_prepare(
    store: RunStore,
    run_id: str,
    token: str,
    owner: str,
    lease: float,
    locator: dict[str, Any] | None = None,
) -> Call | None:
    """Claim run ``run_id`` from ``token`` for ``owner`` (or find it already ``owner``'s:
    an earlier attempt of this job's claim committed but its answer was lost with the
    connection), hold its lease, and :func:`prepare` it; None when it is not to be run here
    (the caller releases the lease). Safe to call again after a database error."""
    if not ledger.take(store, run_id, token, owner, lease):
        rec = store.get(run_id)
        if rec.status != ledger.RUNNING or rec.owner != owner:
            log.info("run %s: not claimed (cancelled, or taken by another job)", run_id)
            return None
    log.info("run %s: claimed by %s on %s", run_id, owner, HOST)
    heartbeat.hold(store, run_id, owner, lease, None)  # renewed from the claim on
    return prepare(store, run_id, owner, locator)


def execute_prepared(store: RunStore, call: Call, owner: str, lease: float) -> None:
    """Execute a call prepared for ``owner``'s claim to its end, its lease held (and the run
    aborted if the heartbeat finds it is no longer ``owner``'s)."""
    run_id = call.state.run_id
    heartbeat.hold(store, run_id, owner, lease, call.state.abort)
    try:
        finish(call)
    finally:
        heartbeat.release(run_id)
