"""The fleet's housekeeping (issue 21, D7) on a real PostgreSQL: Procrastinate jobs whose worker
died are found by Procrastinate's stalled-job query and retried (the run's claim keeps that to
one execution), finished jobs are deleted, and a replica's periodic sweep expires pending runs
past ``run.approvalTtl``."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest
from bench import pgcluster

from tests.store.fleet import make_project, replica
from tests.store.test_contract import record
from tests.store.test_outages import _queued_run, _set_job
from toolctl.runtime.history import queue
from toolctl.runtime.history.postgres import PostgresStore

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def _job_status(url: str, run_id: str) -> str | None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT status::text FROM procrastinate_jobs WHERE args->>'run_id' = %s", (run_id,)
        ).fetchone()
    return None if row is None else str(row[0])


def _stall(url: str, run_id: str) -> None:
    """The run's job taken (``doing``) by a worker that then died: its heartbeat is an hour old."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        (worker,) = conn.execute(
            "INSERT INTO procrastinate_workers (last_heartbeat) "
            "VALUES (now() - interval '1 hour') RETURNING id"
        ).fetchone() or (None,)
        conn.execute(
            "UPDATE procrastinate_jobs SET status = 'doing', worker_id = %s "
            "WHERE args->>'run_id' = %s",
            (worker, run_id),
        )


def test_a_job_whose_worker_died_before_the_claim_is_retried_and_runs_once(
    project: Path, pg_url: str
) -> None:
    from tests.store.procs import toolctl, worker

    args = '{"id": "st1"}'
    out = toolctl(project, pg_url, "run", "chore", "--input", args, "--format", "json")
    run_id = json.loads(out.stdout)["run_id"]  # queued: no worker runs yet
    store = PostgresStore(pg_url, sweep=False)
    try:
        _stall(pg_url, run_id)
        store.update(run_id, expect_status="running", lease_expires=time.time() - 1)
        assert store.sweep() == []  # a job in `doing` still looks alive to the run's sweep...
        assert len(queue.tidy_queue(store)) == 1  # ...Procrastinate sees its worker is gone
        assert _job_status(pg_url, run_id) == "todo"
        assert queue.tidy_queue(store) == []  # retried once, not on every sweep
        with worker(project, pg_url):
            done = toolctl(project, pg_url, "runs", "wait", run_id, "--format", "json")
        assert json.loads(done.stdout)["status"] == "succeeded"
    finally:
        store.close()
    assert (project / "marks" / "st1").read_text().count("\n") == 1


def test_a_stalled_job_of_a_run_already_claimed_does_not_run_it_again(
    project: Path, pg_url: str
) -> None:
    """The dead worker had claimed the run: the lease sweep owns its end; the retried job's
    claim (a compare-and-set from the queue token) finds the run is not the queue's any more."""
    from tests.store.procs import worker

    store = PostgresStore(pg_url, sweep=False)
    try:
        _queued_run(store, project, "st2", idempotent=False)
        store.update("st2", expect_status="running", owner="worker-dead", owner_host="h2")
        _stall(pg_url, "st2")
        assert len(queue.tidy_queue(store)) == 1
        with worker(project, pg_url):
            deadline = time.monotonic() + 30
            while _job_status(pg_url, "st2") is not None and time.monotonic() < deadline:
                time.sleep(0.2)  # the retried job ran (did nothing) and was deleted
        assert _job_status(pg_url, "st2") is None
        assert store.get("st2").owner == "worker-dead"  # not taken by the retried job
    finally:
        store.close()
    assert not (project / "marks" / "st2").exists()


def test_finished_jobs_are_deleted(project: Path, pg_url: str) -> None:
    store = PostgresStore(pg_url, sweep=False)
    try:
        _queued_run(store, project, "f1", idempotent=False)
        _queued_run(store, project, "f2", idempotent=False)
        _set_job(pg_url, "f1", "failed")
        queue.tidy_queue(store)  # kept a day by default, for inspection
        assert _job_status(pg_url, "f1") == "failed"
        queue.tidy_queue(store, finished_hours=0)
        assert _job_status(pg_url, "f1") is None
        assert _job_status(pg_url, "f2") == "todo"  # a waiting job stays
    finally:
        store.close()


def test_a_replica_expires_pending_runs_past_the_approval_ttl(
    project: Path, pg: pgcluster.Cluster
) -> None:
    url = pg.create_database("expiry")
    config = "tools: tools.d\npythonPath: [.]\nrun: {approvalTtl: 5}\n"
    (project / "toolctl.yaml").write_text(config)
    store = PostgresStore(url, sweep=False)
    try:
        old = record("old", "awaiting_approval", created_at=time.time() - 60)
        store.insert(old, durable=True)
        store.insert(record("new", "awaiting_approval", created_at=time.time() + 3600))
        with replica(project, url, environ={"TOOLCTL_LEASE": "1"}):
            deadline = time.monotonic() + 30
            while store.get("old").status != "cancelled" and time.monotonic() < deadline:
                time.sleep(0.1)
        got = store.get("old")
        assert got.status == "cancelled" and got.error is not None
        assert got.error["code"] == "expired" and "run.approvalTtl (5s)" in got.error["message"]
        assert store.get("new").status == "awaiting_approval"
    finally:
        store.close()
