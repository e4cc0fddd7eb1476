"""The fleet through database outages (issue 21): a ``pg_ctl restart -m fast`` cuts every pooled
connection, and a database that refuses connections is reported as unavailable.

Every test here starts PostgreSQL (and most start replicas or workers): slow.
"""

from __future__ import annotations

import asyncio
import json
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from bench import pgcluster

from tests.store.faults import connections, refused, restart
from tests.store.fleet import call_tool, make_project, replica
from tests.store.test_contract import record
from toolctl.runtime.errors import DatabaseUnavailableError
from toolctl.runtime.history.postgres import PostgresStore

pytestmark = pytest.mark.slow


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def _get(url: str, timeout: float = 10) -> tuple[int, str]:
    """Status and body; 0 and the reason when no answer came within ``timeout``."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()
    except (TimeoutError, urllib.error.URLError) as exc:
        return 0, str(exc)


def _status(url: str, run_id: str) -> str:
    store = PostgresStore(url, sweep=False)
    try:
        return store.get(run_id).status
    finally:
        store.close()


# ---------------------------------------------------------------- D2: stale pooled connections


def test_writes_on_stale_pooled_connections_go_through_after_a_restart(
    pg: pgcluster.Cluster, pg_url: str
) -> None:
    store = PostgresStore(pg_url, sweep=False, min_size=3)
    try:
        store.insert(record("r1"))
        restart(pg, "fast")  # every connection in the pool is now dead
        assert store.update("r1", expect_status="running", status="succeeded") is True
        assert store.get("r1").status == "succeeded"
        assert [r.run_id for r in store.query()] == ["r1"]
    finally:
        store.close()


def test_the_pool_reconnects_as_soon_as_the_database_is_back(pg: pgcluster.Cluster) -> None:
    """After an outage a statement gets a connection at once, not when the pool's backoff
    says (psycopg_pool doubled its delay between attempts: 1, 2, 4 s ... so after a few
    seconds down its next attempt came seconds after the database was back, and every
    statement meanwhile failed as "database unavailable"; a minute after a long one)."""
    url = pg.create_database("reconnect")
    store = PostgresStore(url, sweep=False, connect_timeout=1)  # a statement waits 1 s
    try:
        store.insert(record("r1"))
        with refused(pg, "reconnect"):  # the pooled connection is cut, new ones refused
            down = time.monotonic()
            while time.monotonic() - down < 3.5:  # the old pool's next attempt: 7 s in
                with pytest.raises(DatabaseUnavailableError):
                    store.get("r1")
        store.ping()  # (waits for a connection PING_WAIT_S, as a readiness probe)
        assert store.get("r1").status == "running"
        assert sum(connections(pg, "reconnect").values()) <= store.max_size
    finally:
        store.close()


def test_a_statement_that_asked_during_an_outage_gets_a_connection_once_it_is_over(
    pg: pgcluster.Cluster,
) -> None:
    """A statement waiting for a connection (its timeout, here 10 s) gets one when the
    database is back, though the pool's own attempt for it gave up after 2 s; before, it
    waited out its whole timeout and failed (a call's final write, leaving its run running)."""
    from concurrent.futures import ThreadPoolExecutor

    url = pg.create_database("comeback")
    store = PostgresStore(url, sweep=False, connect_timeout=10)
    try:
        store.insert(record("r1"))
        with ThreadPoolExecutor(1) as pool:
            with refused(pg, "comeback"):
                waiting = pool.submit(store.get, "r1")  # asks during the outage
                time.sleep(4)  # the pool's attempt for it has given up
                assert not waiting.done()
            assert waiting.result().status == "running"
    finally:
        store.close()


def test_a_constraint_error_is_not_retried(pg_url: str) -> None:
    store = PostgresStore(pg_url, sweep=False)
    try:
        store.insert(record("dup"))
        with pytest.raises(Exception) as caught:
            store.insert(record("dup"))
        assert not isinstance(caught.value, DatabaseUnavailableError)
        assert len(store.query()) == 1
    finally:
        store.close()


def test_a_call_whose_handler_ran_across_a_restart_or_an_outage_succeeds(
    project: Path, pg: pgcluster.Cluster
) -> None:
    """The handler runs across a restart, then (a second call) the database is away when it
    returns, for longer than a statement waits for a connection (1 s here): the final write
    waits for it instead of failing, so the call succeeds and its run says so (it stayed
    ``running`` before, under a live replica)."""
    url = pg.create_database("restart_call")
    with replica(project, url, environ={"TOOLCTL_STATE_POOL_TIMEOUT": "1"}) as server:
        asyncio.run(call_tool(server.url, "quick", {"id": "warm"}))  # the pool is in use

        async def scenario(mark: str, fault: Callable[[], Any]) -> dict[str, Any]:
            call = asyncio.create_task(call_tool(server.url, "quick", {"id": mark, "seconds": 1}))
            while not (project / "marks" / mark).exists():
                await asyncio.sleep(0.05)
            await asyncio.to_thread(fault)
            return await call

        def away() -> None:
            with refused(pg, "restart_call"):  # from before the handler returns, for 4 s
                time.sleep(2)  # the final write is waiting for the database by now ...
                began = time.monotonic()
                health.append(_get(server.url.rsplit("/", 1)[0] + "/healthz", timeout=1.5)[0])
                time.sleep(max(0.0, 2 - (time.monotonic() - began)))

        health: list[int] = []  # ... on a thread: the replica answers meanwhile

        for mark, fault in (("r", lambda: restart(pg, "fast")), ("o", away)):
            answer = asyncio.run(scenario(mark, fault))
            assert answer["is_error"] is False, (mark, server.log)
            assert answer["status"] == "succeeded"
            assert _status(url, answer["run"]) == "succeeded"
        assert health == [200]
        assert not any("misconfigured" in line for line in server.log)


def test_an_unavailable_database_is_reported_as_such(project: Path, pg: pgcluster.Cluster) -> None:
    url = pg.create_database("outage")
    # a call during the outage gives up waiting for a connection after 2 s instead of 10
    with replica(project, url, environ={"TOOLCTL_STATE_POOL_TIMEOUT": "2"}) as server:
        base = server.url.rsplit("/", 1)[0]
        asyncio.run(call_tool(server.url, "quick", {"id": "before"}))
        with refused(pg, "outage"):
            assert _get(base + "/readyz") == (503, "not ready\n")
            answer = asyncio.run(_text_of_call(server.url, "quick", {"id": "during"}))
        assert answer["is_error"] is True
        assert "database is unavailable" in answer["text"]
        assert "misconfigured" not in answer["text"]
        deadline = time.monotonic() + 30
        while _get(base + "/readyz")[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        after = asyncio.run(call_tool(server.url, "quick", {"id": "after"}))
        assert after["is_error"] is False and after["status"] == "succeeded"


async def _text_of_call(url: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    from mcp.client import Client

    async with Client(url, mode="legacy") as client:
        result = await client.call_tool(tool, args)
    text = " ".join(getattr(block, "text", "") for block in result.content)
    return {"is_error": result.is_error, "text": text}


# ---------------------------------------------------------------- D5: approvals in an outage


def test_an_approval_answered_during_an_outage_keeps_the_run_pending(
    project: Path, pg: pgcluster.Cluster
) -> None:
    """Protocol 2026-07-28: a follow-up that cannot reach the database says so and to retry;
    the same follow-up sent after the outage runs the tool, once."""
    from mcp.client import Client
    from mcp_types import ElicitResult, InputRequiredResult

    url = pg.create_database("approval_outage")
    answer = {"approval": ElicitResult(action="accept", content={})}

    async def accept(context: Any, params: Any) -> Any:  # the client can answer forms
        return ElicitResult(action="accept", content={})

    async def ask(server_url: str) -> Any:
        async with Client(server_url, elicitation_callback=accept) as c:
            return await c.session.call_tool("guarded", {"id": "ap"}, allow_input_required=True)

    async def follow(server_url: str, state: str) -> Any:
        async with Client(server_url, elicitation_callback=accept) as c:
            await c.list_tools()
            return await c.session.call_tool(
                "guarded", {"id": "ap"}, input_responses=answer, request_state=state
            )

    # a follow-up during the outage gives up waiting for a connection after 2 s, not 10
    with replica(project, url, environ={"TOOLCTL_STATE_POOL_TIMEOUT": "2"}) as server:
        asked = asyncio.run(ask(server.url))
        assert isinstance(asked, InputRequiredResult)
        with refused(pg, "approval_outage"):
            during = asyncio.run(follow(server.url, asked.request_state))
        text = " ".join(getattr(block, "text", "") for block in during.content)
        assert during.is_error is True
        assert "database is unavailable" in text and "still waiting" in text
        assert "no longer exists" not in text
        assert not (project / "marks" / "ap").exists()
        store = PostgresStore(url, sweep=False)
        try:
            (row,) = store.query(tool="guarded")
            assert row.status == "awaiting_approval"
        finally:
            store.close()
        after = asyncio.run(follow(server.url, asked.request_state))
    assert after.is_error is False, after
    assert after.structured_content == {"id": "ap"}
    assert (project / "marks" / "ap").read_text().count("\n") == 1


# ---------------------------------------------------------------- D1: runs stranded in the queue


def _queued_run(store: PostgresStore, project: Path, run_id: str, *, idempotent: bool) -> str:
    """A background run of ``chore`` (or ``redo``) waiting in the queue; its queue token."""
    from toolctl.runtime.history import queue
    from toolctl.worker.queued import registry_override

    token = f"tok-{run_id}"
    rec = record(run_id, background=True, owner=token)
    rec.tool = "redo" if idempotent else "chore"
    store.insert(rec)
    locator = {**registry_override(project), "idempotent": idempotent}
    queue.enqueue(store, run_id, token, locator)
    return token


def _set_job(url: str, run_id: str, status: str) -> None:
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(
            "UPDATE procrastinate_jobs SET status = %s WHERE args->>'run_id' = %s",
            (status, run_id),
        )


def test_a_queued_run_whose_job_failed_ends_failed_saying_it_never_ran(
    project: Path, pg_url: str
) -> None:
    store = PostgresStore(pg_url, sweep=False)
    try:
        token = _queued_run(store, project, "q1", idempotent=False)
        assert store.get("q1").lease_expires is not None  # a grace, not "alive forever"
        _set_job(pg_url, "q1", "failed")
        assert store.sweep() == []  # within its grace: left alone
        store.update("q1", expect_owner=token, lease_expires=time.time() - 1)
        assert store.sweep() == ["q1"]
        got = store.get("q1")
        assert got.status == "failed"
        assert got.error is not None and "never ran" in got.error["message"]
    finally:
        store.close()


def test_a_queued_idempotent_run_whose_job_vanished_is_requeued(project: Path, pg_url: str) -> None:
    import psycopg

    store = PostgresStore(pg_url, sweep=False)
    try:
        token = _queued_run(store, project, "q2", idempotent=True)
        with psycopg.connect(pg_url, autocommit=True) as conn:
            conn.execute("DELETE FROM procrastinate_jobs")
        store.update("q2", expect_owner=token, lease_expires=None)  # as an older toolctl wrote
        assert store.sweep() == ["q2"]
        got = store.get("q2")
        assert got.status == "running" and got.owner != token
        assert (got.registry or {}).get("attempt") == 2
        assert store.queue_job_status("q2", got.owner or "") == "todo"
    finally:
        store.close()


def test_a_queued_run_still_waiting_for_a_worker_keeps_waiting(project: Path, pg_url: str) -> None:
    store = PostgresStore(pg_url, sweep=False)
    try:
        token = _queued_run(store, project, "q3", idempotent=False)
        store.update("q3", expect_owner=token, lease_expires=time.time() - 1)
        assert store.sweep() == []
        got = store.get("q3")
        assert got.status == "running" and got.owner == token
        assert (got.lease_expires or 0) > time.time()
    finally:
        store.close()


_FAIL_FIRST_CLAIM = """
CREATE SEQUENCE claim_faults;
CREATE FUNCTION fail_first_claim() RETURNS trigger AS $$
BEGIN
  IF NEW.owner LIKE 'worker-%%' AND OLD.owner IS DISTINCT FROM NEW.owner
     AND nextval('claim_faults') = 1 THEN
    RAISE EXCEPTION 'injected fault: the database failed this claim';
  END IF;
  RETURN NEW;
END $$ LANGUAGE plpgsql;
CREATE TRIGGER fail_first_claim BEFORE UPDATE ON toolctl_runs
  FOR EACH ROW EXECUTE FUNCTION fail_first_claim();
"""


def test_a_claim_that_hits_a_database_error_is_retried(project: Path, pg_url: str) -> None:
    import psycopg

    from tests.store.procs import kill, start_worker, toolctl

    PostgresStore(pg_url).close()  # the tables, for the trigger
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute(_FAIL_FIRST_CLAIM)
    worker = start_worker(project, pg_url)
    try:
        out = toolctl(
            project, pg_url, "run", "chore", "--input", '{"id": "c1"}', "--format", "json"
        )
        run_id = json.loads(out.stdout)["run_id"]
        done = toolctl(project, pg_url, "runs", "wait", run_id, "--format", "json")
        assert json.loads(done.stdout)["status"] == "succeeded"
    finally:
        kill(worker)
    assert (project / "marks" / "c1").read_text().count("\n") == 1
    with psycopg.connect(pg_url, autocommit=True) as conn:
        (faults,) = conn.execute("SELECT last_value FROM claim_faults").fetchone() or (0,)
    assert faults >= 2  # the first claim failed, a retry took it


# ---------------------------------------------------------------- D6: a sweep without workers


def _lost_run(store: PostgresStore, run_id: str) -> None:
    """A run left ``running`` by a replica on another machine that died: its lease is over."""
    store.insert(
        record(run_id, owner="gone", owner_host="gone-host", owner_pid=1, lease_expires=1.0)
    )


def test_sweeps_take_turns_across_the_fleet(pg_url: str) -> None:
    import psycopg

    store = PostgresStore(pg_url, sweep=False)
    try:
        _lost_run(store, "l1")
        with psycopg.connect(pg_url, autocommit=True) as other:  # another replica sweeping
            other.execute("SELECT pg_advisory_lock(7415321908)")
            assert store.sweep_exclusive() is None
            assert store.get("l1").status == "running"
        assert store.sweep_exclusive() == ["l1"]  # its turn ended with its connection
        assert store.get("l1").status == "interrupted"
    finally:
        store.close()


def test_a_replica_sweeps_expired_leases_with_no_worker_running(
    project: Path, pg: pgcluster.Cluster
) -> None:
    url = pg.create_database("no_workers")
    with replica(project, url, environ={"TOOLCTL_LEASE": "1"}):
        store = PostgresStore(url, sweep=False)  # this store never sweeps
        try:
            _lost_run(store, "l2")
            deadline = time.monotonic() + 60
            while store.get("l2").status == "running" and time.monotonic() < deadline:
                time.sleep(0.1)
            assert store.get("l2").status == "interrupted"
        finally:
            store.close()


# ---------------------------------------------------------------- D8: connections per process


class _Peak:
    """The most connections to one database seen while sampling in the background."""

    def __init__(self, cluster: pgcluster.Cluster, database: str) -> None:
        import threading

        import psycopg

        self.cluster, self.database, self.most = cluster, database, 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        # one connection (to another database: not counted) for every sample, the sampler's
        # and now()'s alike (psycopg serialises them): a new one 20 times a second cost more
        # CPU than the processes under test
        self._conn = psycopg.connect(cluster.url, autocommit=True)

    def now(self) -> int:
        return sum(connections(self.cluster, self.database, self._conn).values())

    def _sample(self) -> None:
        while not self._stop.wait(0.05):
            self.most = max(self.most, self.now())

    def __enter__(self) -> _Peak:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        self._conn.close()


def _settle(peak: _Peak, expected: int) -> int:
    """The connection count once it stops moving (pools open their minimum in the background)."""
    deadline = time.monotonic() + 20
    seen = peak.now()
    while seen != expected and time.monotonic() < deadline:
        time.sleep(0.1)
        seen = peak.now()
    return seen


POOL = {"TOOLCTL_STATE_POOL_MIN": "1", "TOOLCTL_STATE_POOL_MAX": "3"}


def test_a_replica_opens_no_more_connections_than_documented(
    project: Path, pg: pgcluster.Cluster
) -> None:
    """docs/deployment.md: a replica holds POOL_MIN idle, and at most POOL_MAX for calls
    (+ 1 for its periodic sweep, + min(4, POOL_MAX) while it enqueues background runs)."""
    url = pg.create_database("count_replica")
    with replica(project, url, environ=POOL) as server, _Peak(pg, "count_replica") as peak:
        asyncio.run(call_tool(server.url, "quick", {"id": "w"}))
        assert _settle(peak, 1) == 1

        async def load() -> list[dict[str, Any]]:
            calls = [
                call_tool(server.url, "quick", {"id": f"p{i}", "seconds": 1}) for i in range(8)
            ]
            return await asyncio.gather(*calls)

        answers = asyncio.run(load())
    assert all(a["is_error"] is False for a in answers)
    print(f"replica: idle 1, peak {peak.most}")
    assert peak.most <= 3 + 1  # POOL_MAX for the calls, 1 for the sweep


def test_a_worker_opens_no_more_connections_than_documented(
    project: Path, pg: pgcluster.Cluster
) -> None:
    """docs/deployment.md: a worker holds 3 idle (the run history's pool minimum, the task
    queue's pool minimum, its LISTEN connection), and at most POOL_MAX + concurrency + 1 + 1
    (+1 for its periodic sweep, + min(4, POOL_MAX) when it re-queues a lost run)."""
    import subprocess
    import sys

    from tests.store.procs import env, kill, toolctl
    from toolctl.runtime.history import runs

    url = pg.create_database("count_worker")
    PostgresStore(url).close()
    worker = subprocess.Popen(
        [sys.executable, "-m", "toolctl", "worker", "--concurrency", "2"],
        cwd=project,
        env={**env(project, url), **POOL},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        with _Peak(pg, "count_worker") as peak:
            idle = _settle(peak, 3)
            ids = []
            for i in range(4):
                args = json.dumps({"id": f"k{i}", "seconds": 0.5})
                out = toolctl(project, url, "run", "chore", "--input", args, "--format", "json")
                ids.append(json.loads(out.stdout)["run_id"])
            # waited for here, not by four more `toolctl runs wait` processes (the worker's
            # connections are the subject; the command has tests of its own)
            store = PostgresStore(url, sweep=False)
            try:
                assert [runs.wait(store, run_id).status for run_id in ids] == ["succeeded"] * 4
            finally:
                store.close()
    finally:
        kill(worker)
    print(f"worker: idle {idle}, peak {peak.most} (with the toolctl commands' own)")
    assert idle == 3


@pytest.mark.parametrize(
    ("environ", "named"),
    [
        ({"TOOLCTL_STATE_POOL_MAX": "many"}, "TOOLCTL_STATE_POOL_MAX='many'"),
        ({"TOOLCTL_STATE_POOL_MAX": "0"}, "TOOLCTL_STATE_POOL_MAX='0'"),
        ({"TOOLCTL_STATE_POOL_MIN": "-1"}, "TOOLCTL_STATE_POOL_MIN='-1'"),
        ({"TOOLCTL_STATE_POOL_MIN": "5", "TOOLCTL_STATE_POOL_MAX": "2"}, "is more than"),
    ],
)
def test_an_unusable_pool_size_is_a_clear_error(environ: dict[str, str], named: str) -> None:
    from toolctl.runtime.errors import StateError
    from toolctl.runtime.history.postgres import pool_sizes

    with pytest.raises(StateError) as caught:
        pool_sizes(environ)
    assert named in caught.value.message
    assert pool_sizes({}) == (1, 8)
    assert pool_sizes({"TOOLCTL_STATE_POOL_MIN": "0", "TOOLCTL_STATE_POOL_MAX": "2"}) == (0, 2)


def test_the_pool_timeout_setting() -> None:
    from toolctl.runtime.errors import StateError
    from toolctl.runtime.history.postgres import pool_timeout

    assert pool_timeout({}) == 10.0
    assert pool_timeout({"TOOLCTL_STATE_POOL_TIMEOUT": "2.5"}) == 2.5
    for bad in ("soon", "0", "nan", "inf"):
        with pytest.raises(StateError) as caught:
            pool_timeout({"TOOLCTL_STATE_POOL_TIMEOUT": bad})
        assert f"TOOLCTL_STATE_POOL_TIMEOUT={bad!r}" in caught.value.message


def test_the_cli_reports_an_unusable_pool_size_without_a_traceback(
    project: Path, pg_url: str
) -> None:
    import subprocess
    import sys

    from tests.store.procs import env

    done = subprocess.run(
        [sys.executable, "-m", "toolctl", "runs", "list"],
        cwd=project,
        env={**env(project, pg_url), "TOOLCTL_STATE_POOL_MAX": "many"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode != 0
    assert "TOOLCTL_STATE_POOL_MAX='many'" in done.stderr
    assert "Traceback" not in done.stderr and pgcluster.PASSWORD not in done.stderr


def test_a_background_run_finishing_across_a_restart_is_recorded_once(
    project: Path, pg: pgcluster.Cluster
) -> None:
    """An idempotent background run whose worker finishes it on connections a restart broke is
    recorded ``succeeded``, not left ``running`` for a sweep to re-queue and run again."""
    import subprocess
    import sys

    from tests.store.procs import env, kill, toolctl

    url = pg.create_database("restart_worker")
    PostgresStore(url).close()
    # A long lease: no renewal replaces a broken connection before the final write does.
    worker = subprocess.Popen(
        [sys.executable, "-m", "toolctl", "worker", "--lease", "60"],
        cwd=project,
        env=env(project, url),
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        args = json.dumps({"id": "bg", "seconds": 2})
        out = toolctl(project, url, "run", "redo", "--input", args, "--format", "json")
        run_id = json.loads(out.stdout)["run_id"]
        deadline = time.monotonic() + 60
        while not (project / "marks" / "bg").exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        restart(pg, "fast")  # while the handler runs: the worker's connections all break
        while _status(url, run_id) == "running" and time.monotonic() < deadline:
            time.sleep(0.2)
        assert _status(url, run_id) == "succeeded"
    finally:
        kill(worker)
    assert (project / "marks" / "bg").read_text().count("\n") == 1


def test_a_replica_starts_while_its_database_is_away(project: Path, pg: pgcluster.Cluster) -> None:
    """The periodic sweep opens the history when it first runs, not at start: a replica started
    during an outage serves /readyz 503, then takes calls once the database is back."""
    import contextlib

    url = pg.create_database("late_db")
    outage = contextlib.ExitStack()
    outage.enter_context(refused(pg, "late_db"))
    with outage, replica(project, url, environ={"TOOLCTL_LEASE": "1"}) as server:
        base = server.url.rsplit("/", 1)[0]
        assert _get(base + "/readyz") == (503, "not ready\n")
        time.sleep(1)  # a sweep or two fails meanwhile: logged, the replica serves on
        outage.close()  # the database is back
        deadline = time.monotonic() + 30
        while _get(base + "/readyz")[0] != 200 and time.monotonic() < deadline:
            time.sleep(0.2)
        answer = asyncio.run(call_tool(server.url, "quick", {"id": "late"}))
    assert answer["is_error"] is False and answer["status"] == "succeeded"


def test_a_call_queued_while_the_queue_has_no_connection_blocks_no_other_call(
    project: Path, pg: pgcluster.Cluster, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A background call whose task queue waits for a connection (none can be opened) waits
    on a worker thread: a quick call on the same event loop answers meanwhile, and the
    background call is told the database is unavailable (before: the wait ran on the loop, so
    a replica froze, every call it served included, for the pool's timeout)."""
    import toolctl

    monkeypatch.setenv("MARKS", str(project / "marks"))  # where the handlers leave markers
    url = pg.create_database("queue_blocked")
    store = PostgresStore(url, sweep=False, connect_timeout=1)  # a connection waited 1 s
    try:
        store.ensure_queue_schema()
        registry = toolctl.load_project(project)
        with refused(pg, "queue_blocked", cut=False):  # the store's open connection stays

            async def both() -> tuple[Any, Any, bool]:
                queued = asyncio.create_task(registry.acall("chore", {"id": "bg"}, store=store))
                quick = asyncio.create_task(registry.acall("quick", {"id": "q"}, store=store))
                done, _ = await asyncio.wait({queued, quick}, return_when="FIRST_COMPLETED")
                return await queued, await quick, quick in done and queued not in done

            queued, quick, quick_first = asyncio.run(both())
        assert quick.ok and quick_first
        assert not queued.ok and queued.error is not None
        assert "database unavailable" in queued.error.message
    finally:
        store.close()
