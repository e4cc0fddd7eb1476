"""The lease heartbeat: one per process, renewing the leases of every run the process is
executing on a history shared by several machines (PostgreSQL).

A sweep on another host can judge a ``running`` run only by its lease
(:func:`toolctl.runtime.history.ownership.owner_alive`). So a run executed here on a shared store
holds a
short lease (:func:`lease_for`) that this heartbeat renews every third of the shortest lease held,
with one statement per store for all of the process's runs in flight
(``renew_leases``). If the process dies, renewals stop and any sweep marks its runs
``interrupted`` once the lease ends. If a renewal finds a run no longer owned by its holder
(``runs cancel``, or taken as lost by a sweep), the run's abort signal is set (the handler is
told) and the run is dropped; its final write is a compare-and-set and loses, so the other state
stands. Background runs in ``toolctl worker`` and foreground calls share this heartbeat.

A store without the ``leases`` capability (SQLite, in memory) is on one machine: its runs'
owners are judged by pid, so nothing is renewed and its leases keep the long, unrenewed form.

Cost: :func:`hold` and :func:`release` are a dict write each. The renewing thread starts only
when a run may need renewing: on an event loop that stays free (a server, ``acall``) a timer
starts it one renewal period after the run began, so a fast call never starts it; on the
synchronous API's private loop, which a handler may block, it starts with the first run held.
It stops at the first renewal time with nothing held (or when the last store with runs held is
closed), so a stream of calls starts it at most once per renewal period. Renewals run on that
thread, never on an event loop.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolctl.runtime.history.capabilities import LeaseStore
from toolctl.runtime.history.ownership import DEFAULT_LEASE_S, LEASE_ENV, LEASE_S, TIMEOUT_MARGIN_S
from toolctl.runtime.resources import current
from toolctl.runtime.sync import owns_running_loop

if TYPE_CHECKING:
    from toolctl.runtime.context import AbortSignal
    from toolctl.runtime.history.records import RunStore

log = logging.getLogger("toolctl.runtime")


@dataclass(slots=True)
class _Held:
    store: LeaseStore
    owner: str
    lease: float
    abort: AbortSignal | None


class Heartbeat:
    """The lease heartbeat of a :class:`~toolctl.runtime.resources.Runtime`: the runs held, and
    the renewing thread while any is. ``lease``: the foreground lease (default
    ``TOOLCTL_LEASE``, read on first use)."""

    def __init__(self, lease: float | None = None) -> None:
        self._lock = threading.Lock()
        self._wake = threading.Condition(self._lock)
        self._held: dict[str, _Held] = {}
        self._thread: threading.Thread | None = None
        self._idle_exit = False  # stop at once when nothing is held (a store was closed)
        self._period = LEASE_S / 3  # the renewal period: a third of the shortest lease held
        self._lease = lease
        # How many times the renewing thread started, and how many of those renewed at once
        # (a timer on a free loop started it): for tests and diagnostics.
        self.starts = 0
        self.renewed_first = 0

    def foreground_lease(self) -> float:
        """The lease of a run executed by a call (see :func:`foreground_lease`)."""
        if self._lease is None:
            self._lease = _configured_lease(os.environ.get(LEASE_ENV, ""))
        return self._lease

    def hold(self, leases: LeaseStore, run_id: str, owner: str, lease: float, abort: Any) -> None:
        with self._lock:
            self._held[run_id] = _Held(leases, owner, lease, abort)
            if self._thread is not None:
                if lease / 3 < self._period:  # renew sooner than the thread planned
                    self._wake.notify()
                return
            loop = _free_loop()
            if loop is None:
                self._thread = self._start(renew_first=False)
                return
        loop.call_later(lease / 3, self._start_if_held, run_id)

    def release(self, run_id: str) -> None:
        if self._held:  # most processes hold nothing: skip the lock
            with self._lock:
                self._held.pop(run_id, None)

    @property
    def running(self) -> bool:
        """True while the renewing thread runs."""
        return self._thread is not None

    def _start_if_held(self, run_id: str) -> None:
        with self._lock:
            if run_id in self._held and self._thread is None:
                self._thread = self._start(renew_first=True)

    def _start(self, *, renew_first: bool) -> threading.Thread:
        self.starts += 1
        self.renewed_first += renew_first
        thread = threading.Thread(
            target=self._beat, args=(renew_first,), name="toolctl-heartbeat", daemon=True
        )
        thread.start()
        return thread

    def _beat(self, renew_first: bool) -> None:
        last = -float("inf") if renew_first else time.monotonic()
        while True:
            with self._lock:
                while True:
                    if self._held:
                        self._period = min(h.lease for h in self._held.values()) / 3
                    elif self._idle_exit:
                        break
                    delay = last + self._period - time.monotonic()
                    if delay <= 0:
                        break
                    self._wake.wait(delay)
                if not self._held:  # stop at a renewal time, not at once: calls may follow
                    self._thread, self._idle_exit = None, False
                    return
                batch = dict(self._held)
            last = time.monotonic()
            self._renew(batch)

    def stop_renewing(self, store: object) -> None:
        """Forget ``store``'s runs; with nothing else held, the thread stops now."""
        with self._lock:
            for run_id in [r for r, held in self._held.items() if held.store is store]:
                del self._held[run_id]
            if not self._held and self._thread is not None:
                self._idle_exit = True
                self._wake.notify()

    def close(self) -> None:
        """Stop renewing every run (their leases run out; a sweep ends them if they do)."""
        with self._lock:
            self._held.clear()
            if self._thread is not None:
                self._idle_exit = True
                self._wake.notify()

    def _renew(self, batch: dict[str, _Held]) -> None:
        """One statement per store for every run in ``batch``; abort the runs no longer ours."""
        by_store: dict[int, list[str]] = {}
        for run_id, held in batch.items():
            by_store.setdefault(id(held.store), []).append(run_id)
        for run_ids in by_store.values():
            store = batch[run_ids[0]].store
            if store.closed:
                self._drop(batch, run_ids)
                continue
            try:
                kept = store.renew_leases([(r, batch[r].owner, batch[r].lease) for r in run_ids])
            except Exception as exc:  # the database is away: keep the handlers going, retry
                log.warning("could not renew the leases of %d run(s): %s", len(run_ids), exc)
                continue
            lost = [r for r in run_ids if r not in kept]
            for run_id in self._drop(batch, lost):
                log.info("run %s: no longer ours (cancelled elsewhere); aborting it", run_id)
                abort = batch[run_id].abort
                if abort is not None:
                    abort.abort("cancelled")

    def _drop(self, batch: dict[str, _Held], run_ids: list[str]) -> list[str]:
        """Stop holding ``run_ids`` unless held again meanwhile; the ones dropped."""
        dropped = []
        with self._lock:
            for run_id in run_ids:
                if self._held.get(run_id) is batch[run_id]:
                    del self._held[run_id]
                    dropped.append(run_id)
        return dropped


def shared(store: RunStore) -> bool:
    """True when ``store`` renews leases (its capabilities, worked out when it was made)."""
    return store.capabilities.leases is not None


def foreground_lease() -> float:
    """The lease of a run executed by a call: the runtime's (``TOOLCTL_LEASE`` seconds, else
    :data:`LEASE_S`)."""
    return current().heartbeat.foreground_lease()


def _configured_lease(raw: str) -> float:
    """``TOOLCTL_LEASE`` as seconds; a value that is not a positive, finite number is logged
    (naming the variable) and :data:`LEASE_S` used instead."""
    if not raw:
        return LEASE_S
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if value > 0 and math.isfinite(value):
        return value
    log.warning(
        "%s=%r is not a positive number of seconds; using the default lease of %g s",
        LEASE_ENV,
        raw,
        LEASE_S,
    )
    return LEASE_S


def lease_for(store: RunStore, timeout: float | None) -> float:
    """The lease a call takes on a run in ``store``: short and renewed on a shared store; on a
    one-machine store (never renewed) long enough to cover the whole run."""
    if shared(store):
        return foreground_lease()
    return timeout + TIMEOUT_MARGIN_S if timeout else DEFAULT_LEASE_S


def hold(
    store: RunStore, run_id: str, owner: str, lease: float, abort: AbortSignal | None = None
) -> None:
    """Renew run ``run_id``'s lease (owned by ``owner``) until :func:`release`; ``abort`` is set
    if a renewal finds the run no longer ours. Nothing to do for a one-machine store."""
    leases = store.capabilities.leases
    if leases is not None:
        current().heartbeat.hold(leases, run_id, owner, lease, abort)


def release(run_id: str) -> None:
    """Stop renewing run ``run_id`` (it ended, or is no longer this process's to run)."""
    current().heartbeat.release(run_id)


def running() -> bool:
    """True while the renewing thread runs (for tests and diagnostics)."""
    return current().heartbeat.running


def stop_renewing(store: object) -> None:
    """Forget ``store``'s runs (it is being closed); with nothing else held, the thread stops
    now rather than at its next renewal time."""
    current().heartbeat.stop_renewing(store)


def _free_loop() -> Any:
    """The event loop running on this thread if nothing will block it while a run is held (so a
    timer on it fires), else None."""
    if owns_running_loop():
        return None
    import asyncio

    try:
        return asyncio.get_running_loop()
    except RuntimeError:  # the history writer's thread, a worker thread: no loop here
        return None
