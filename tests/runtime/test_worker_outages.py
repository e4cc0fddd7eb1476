"""A queue worker and a database that goes away: a run claimed before the outage runs once when
the database answers again, never left ``running`` under a worker that no longer runs it
(``runtime/pipeline/handoff.py``); and the worker's loop, stopped by the outage, starts again,
while a stop signal still stops it (``worker/queued.py``)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from toolctl.registry import Registry
from toolctl.runtime import api
from toolctl.runtime.errors import DatabaseUnavailableError
from toolctl.runtime.history import patience
from toolctl.runtime.history.capabilities import Capabilities
from toolctl.runtime.history.memory import MemoryStore
from toolctl.runtime.history.records import RunStore
from toolctl.runtime.pipeline import handoff, recording


class Outage:
    """A run store through a database outage: its next ``lost`` updates are applied but answer
    as a lost connection (the commit happened, the reply never came), and its next ``reads``
    reads fail as the database being away."""

    def __init__(self, store: RunStore, lost: int, reads: int) -> None:
        self.store, self.lost, self.reads = store, lost, reads

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)

    def update(self, *args: Any, **kwargs: Any) -> bool:
        done = self.store.update(*args, **kwargs)
        if self.lost:
            self.lost -= 1
            raise DatabaseUnavailableError("database unavailable: the connection was lost")
        return done

    def get(self, run_id: str) -> Any:
        if self.reads:
            self.reads -= 1
            raise DatabaseUnavailableError("database unavailable: connection refused")
        return self.store.get(run_id)


def test_a_claim_whose_answer_was_lost_runs_once_when_the_database_answers(
    reg: Registry, spawned: list[tuple[str, str]]
) -> None:
    started = reg.call("bg", {"s": 0})
    store = api.resolve_store(reg)
    run_id, token = spawned[0]
    away = Outage(store, lost=1, reads=1)
    call = handoff.waiting_out_outages(
        run_id, lambda: handoff.claim_and_prepare(away, run_id, token, "worker-a", 30.0), no_stop
    )
    assert call is not None and away.lost == away.reads == 0  # it waited the outage out
    # another job for the same run (a duplicate, or the queue retrying) does not take it
    assert handoff.claim_and_prepare(store, run_id, token, "worker-b", 30.0) is None
    handoff.execute_prepared(store, call, "worker-a", 30.0)
    rec = store.get(started.run_id)
    assert rec.status == "succeeded" and rec.output == {"slept": 0}


def test_a_worker_stopping_during_the_outage_leaves_the_run_to_the_sweeps(
    reg: Registry, spawned: list[tuple[str, str]]
) -> None:
    reg.call("bg", {"s": 0})
    run_id, token = spawned[0]
    away = Outage(api.resolve_store(reg), lost=0, reads=5)
    step = lambda: handoff.claim_and_prepare(away, run_id, token, "worker-a", 30.0)  # noqa: E731
    assert handoff.waiting_out_outages(run_id, step, lambda: True) is None
    assert away.reads == 4  # one attempt, then it stopped


def no_stop() -> bool:
    return False


# A worker whose Procrastinate loop stops the first time as it does when the database goes
# away under it; the second time the process sends itself SIGTERM, which must stop the loop
# gracefully (its jobs' shutdown) and the worker, not start it again.
WORKER = textwrap.dedent("""
    import asyncio, contextlib, logging, os, signal, sys
    import psycopg
    from procrastinate.exceptions import ConnectorException
    from toolctl.worker import queued

    logging.basicConfig(level=logging.INFO, format="%(name)s: %(message)s", stream=sys.stdout)
    queued.RESTART_PAUSE = (0.05, 0.05)
    starts = []

    class App:
        @contextlib.asynccontextmanager
        async def open_async(self):
            yield

        async def run_worker_async(self, **options):
            starts.append(options["name"])
            if len(starts) == 1:
                try:
                    raise psycopg.OperationalError("server closed the connection unexpectedly")
                except psycopg.OperationalError as exc:
                    raise ConnectorException("Database error.") from exc
            os.kill(os.getpid(), signal.SIGTERM)
            try:
                await asyncio.sleep(30)
            except asyncio.CancelledError:
                print("graceful shutdown")
                raise

    stopping = queued.Stopping()
    queued.serve_queue(App, {"name": "w"}, stopping)
    print("starts:", len(starts), "stopping:", stopping.is_set())
""")


def test_the_worker_loop_starts_again_after_losing_the_database_and_stops_on_sigterm() -> None:
    done = subprocess.run(
        [sys.executable, "-c", WORKER], capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert "lost the task queue's database (OperationalError: server closed the connection" in out
    assert "graceful shutdown" in out
    assert out.rstrip().endswith("starts: 2 stopping: True")


class AwayStore(MemoryStore):
    """A shared store (leases renewed, as PostgreSQL's) whose updates fail as the database
    being away until ``back`` is set."""

    def __init__(self) -> None:
        super().__init__()
        self.back, self.shut = threading.Event(), False
        self.capabilities = Capabilities.probe(self)

    @property
    def closed(self) -> bool:
        return self.shut

    def renew_leases(self, runs: Sequence[tuple[str, str, float]]) -> set[str]:
        return {run_id for run_id, _owner, _lease in runs}

    def update(self, run_id: str, **changes: Any) -> bool:
        if not self.back.is_set():
            raise DatabaseUnavailableError("database unavailable: connection refused")
        return super().update(run_id, **changes)


@pytest.fixture
def away(monkeypatch: pytest.MonkeyPatch) -> Iterator[AwayStore]:
    """An :class:`AwayStore`, final writes' patience short; closed after the test: a final write
    left trying would hold its run's heartbeat for the rest of the worker's tests."""
    monkeypatch.setattr(recording, "FINAL_WRITE_PATIENCE_S", 0.05)
    monkeypatch.setattr(patience, "PAUSE", (0.01, 0.02))
    store = AwayStore()
    yield store
    store.shut = True


def test_a_final_write_past_its_patience_lands_once_the_database_is_back(
    reg: Registry, away: AwayStore
) -> None:
    store = away
    with pytest.raises(DatabaseUnavailableError):  # the call still answers "unavailable"
        reg.call("add", {"a": 1, "b": 2}, store=store)
    (run,) = store.query()
    assert run.status == "running"  # the handler ran; its outcome is not stored yet
    store.back.set()
    deadline = time.monotonic() + 10
    while store.get(run.run_id).status == "running" and time.monotonic() < deadline:
        time.sleep(0.01)
    assert store.get(run.run_id).status == "succeeded"  # not left running until exit
    assert store.get(run.run_id).output == {"sum": 3}


def test_the_final_write_stops_trying_once_its_store_is_closed(
    reg: Registry, away: AwayStore
) -> None:
    store = away
    # Thread objects, not idents: the ident of a thread that ended meanwhile may be reused.
    before = set(threading.enumerate())
    with pytest.raises(DatabaseUnavailableError):
        reg.call("add", {"a": 1, "b": 2}, store=store)
    (trying,) = [t for t in threading.enumerate() if t not in before and "final" in t.name]
    assert trying.daemon  # never keeps the process alive
    store.shut = True
    trying.join(timeout=10)
    assert not trying.is_alive()
    assert store.query()[0].status == "running"  # left to the sweeps, as before


def test_final_writes_kept_trying_are_bounded() -> None:
    # A long outage under load fails a call every so often: past the bound, no more threads.
    stop, ran = threading.Event(), []

    def unavailable() -> None:
        raise DatabaseUnavailableError("database unavailable: connection refused")

    def start() -> threading.Thread | None:
        return patience.keep_trying(
            unavailable, stop.is_set, what="test", then=lambda: ran.append(1), pause=(0.01, 0.02)
        )

    threads = [start() for _ in range(patience.MAX_KEPT_TRYING)]
    try:
        assert all(t is not None and t.is_alive() for t in threads)
        assert start() is None and not ran  # not started, and its `then` not run
    finally:
        stop.set()
    for t in threads:
        assert t is not None
        t.join(timeout=10)
    assert len(ran) == patience.MAX_KEPT_TRYING
    again = start()  # the bound is free again once they are done
    assert again is not None
    again.join(timeout=10)
