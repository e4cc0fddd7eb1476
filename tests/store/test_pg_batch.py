"""The history writer's batch on PostgreSQL (issue 27): the row writes of calls in flight go in
one transaction, sent as one round trip; a write that fails fails alone, a transaction that
fails fails every write of it (no call is told its row is written when it is not), and
connections a restart broke are replaced before the batch is sent again."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import Any

import pytest
from bench import pgcluster

import toolctl
from tests.store.faults import refused, restart
from toolctl.runtime.errors import DatabaseUnavailableError, StateError
from toolctl.runtime.history import ledger
from toolctl.runtime.history import writer as history
from toolctl.runtime.history.postgres import PostgresStore
from toolctl.runtime.history.records import RowWrite, RunRecord
from toolctl.runtime.resources import current


def record(run_id: str, **fields: Any) -> RunRecord:
    return RunRecord(
        run_id=run_id,
        tool="t",
        status="running",
        tool_digest="d",
        created_at=time.time(),
        **fields,
    )


def succeed(run_id: str) -> RowWrite:
    """The compare-and-set that ends a running run."""
    return ledger.settle_write(run_id, {"status": "succeeded"}, status="running", owner=None)


@pytest.fixture
def store(pg_url: str) -> Any:
    made = PostgresStore(pg_url, sweep=False, connect_timeout=1)
    yield made
    made.close()


def staged(store: PostgresStore, write: Any, seen: list[Any]) -> history._Job:
    """A writer job whose row write is ``write`` (or what calling it returns), noting in
    ``seen`` each write made and its outcome."""

    def prepare() -> RowWrite:
        return write() if callable(write) else write

    def then(made: RowWrite, changed: bool) -> None:
        seen.append((made.run_id, changed))

    return history._Job(history.Staged(store, prepare, then), store, None, None)


def transactions(store: PostgresStore) -> dict[str, str]:
    """Each row's inserting or last updating transaction (``xmin``)."""
    rows = store._run("SELECT run_id, xmin::text AS tx FROM toolctl_runs", fetch=True)
    return {row["run_id"]: row["tx"] for row in rows}


def test_the_writes_of_a_batch_commit_in_one_transaction(store: PostgresStore) -> None:
    store.insert(record("held"))
    seen: list[Any] = []
    jobs = [
        staged(store, ledger.begin_write(record("a")), seen),
        staged(store, succeed("held"), seen),
        staged(store, succeed("held"), seen),  # after the one before it: its CAS loses
    ]
    history.run_batch(jobs)
    assert [job.error for job in jobs] == [None, None, None]
    assert seen == [("a", True), ("held", True), ("held", False)]
    assert store.get("held").status == "succeeded"
    written = transactions(store)
    assert written["a"] == written["held"]  # one transaction


def test_a_write_that_fails_in_a_batch_fails_alone(store: PostgresStore) -> None:
    store.insert(record("taken"))
    seen: list[Any] = []
    jobs = [
        staged(store, ledger.begin_write(record("b")), seen),
        staged(store, ledger.begin_write(record("taken")), seen),  # the run id exists
        staged(store, ledger.begin_write(record("nul", traceback="a\x00b")), seen),
        staged(store, succeed("b"), seen),
    ]
    history.run_batch(jobs)
    assert isinstance(jobs[1].error, StateError) and "duplicate key" in str(jobs[1].error)
    assert isinstance(jobs[2].error, StateError) and "NUL" in str(jobs[2].error)
    assert jobs[0].error is None and jobs[3].error is None
    assert seen == [("b", True), ("b", True)]  # nothing after a write that was not made
    assert sorted(transactions(store)) == ["b", "taken"]
    assert store.get("b").status == "succeeded"


def test_a_batch_whose_every_write_fails_leaves_the_connection_usable(
    pg_url: str,
) -> None:
    store = PostgresStore(pg_url, sweep=False, max_size=1)  # the same session throughout
    try:
        store.insert(record("x"))
        seen: list[Any] = []
        jobs = [staged(store, ledger.begin_write(record("x")), seen) for _ in range(2)]
        history.run_batch(jobs)
        assert all(isinstance(job.error, StateError) for job in jobs) and seen == []
        history.run_batch([staged(store, ledger.begin_write(record(r)), seen) for r in "yz"])
        assert seen == [("y", True), ("z", True)]
    finally:
        store.close()


def test_a_batch_survives_its_session_losing_the_prepared_statements(pg_url: str) -> None:
    store = PostgresStore(pg_url, sweep=False, max_size=1)  # the same session throughout
    try:
        store.insert(record("p0"))  # the insert is prepared on the session
        store._run("DEALLOCATE ALL", durable=False)  # as a pooler's new server session would
        seen: list[Any] = []
        history.run_batch([staged(store, ledger.begin_write(record(r)), seen) for r in "pq"])
        assert seen == [("p", True), ("q", True)]
        assert sorted(transactions(store)) == ["p", "p0", "q"]
    finally:
        store.close()


def test_a_batch_cut_by_an_outage_tells_no_call_its_row_is_written(
    store: PostgresStore, pg: pgcluster.Cluster, pg_url: str
) -> None:
    database = pg_url.rsplit("/", 1)[1]
    seen: list[Any] = []
    with contextlib.ExitStack() as outage:

        def cut_first() -> RowWrite:  # the database goes away as the batch is prepared
            outage.enter_context(refused(pg, database))
            return ledger.begin_write(record("c1"))

        jobs = [
            staged(store, cut_first, seen),
            staged(store, ledger.begin_write(record("c2")), seen),
        ]
        history.run_batch(jobs)
    assert all(isinstance(job.error, DatabaseUnavailableError) for job in jobs)
    assert seen == []
    assert transactions(store) == {}  # the database is back: nothing of the batch was written
    history.run_batch([staged(store, ledger.begin_write(record(r)), seen) for r in ("c1", "c2")])
    assert seen == [("c1", True), ("c2", True)]


def test_a_batch_on_connections_a_restart_broke_is_sent_again(
    pg: pgcluster.Cluster, pg_url: str
) -> None:
    store = PostgresStore(pg_url, sweep=False, min_size=2)
    try:
        store.insert(record("r"))
        restart(pg, "fast")  # every pooled connection is now dead
        seen: list[Any] = []
        history.run_batch(
            [
                staged(store, succeed("r"), seen),
                staged(store, ledger.begin_write(record("s")), seen),
            ]
        )
        assert seen == [("r", True), ("s", True)]
        written = transactions(store)
        assert written["r"] == written["s"]
    finally:
        store.close()


# ---------------------------------------------------------------- calls in flight

TOOLS = """\
toolctl: 1
tools:
  - name: plain
    description: Echo after a moment.
    handler: pg_batch_handlers:echo
    inputSchema:
      type: object
      properties: {msg: {type: string}, seconds: {type: number}}
      required: [msg]
  - name: looked_up
    description: Echo at once.
    handler: pg_batch_handlers:echo
    mcp:
      annotations: {readOnlyHint: true}
    inputSchema:
      type: object
      properties: {msg: {type: string}}
      required: [msg]
"""
HANDLERS = """\
import time

def echo(args):
    time.sleep(args.get("seconds", 0))
    return {"msg": args["msg"]}
"""


@pytest.fixture
def registry(tmp_path: Path) -> Any:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [.]\n")
    # a module name of its own: a worker that imported another test's `handlers` keeps it
    (tmp_path / "pg_batch_handlers.py").write_text(HANDLERS)
    (tmp_path / "tools.d" / "tools.yaml").write_text(TOOLS)
    return toolctl.load_project(tmp_path)


def _burst(registry: Any, store: PostgresStore, tool: str, count: int, **args: Any) -> list[Any]:
    async def burst() -> list[Any]:
        calls = [registry.acall(tool, {"msg": f"x{i}", **args}, store=store) for i in range(count)]
        return list(await asyncio.gather(*calls, return_exceptions=True))

    return asyncio.run(burst())


def test_calls_in_flight_keep_their_rows_when_one_write_fails(
    registry: Any, store: PostgresStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a rule of this database refuses one call's row: its write fails on the server, in the batch
    store._run(
        "ALTER TABLE toolctl_runs ADD CONSTRAINT no_x13 CHECK (output NOT LIKE '%x13%')",
        durable=False,
    )
    monkeypatch.setattr(current().history, "active", 5)  # the writer thread writes, batched
    results = _burst(registry, store, "looked_up", 30)
    failed = [r for r in results if isinstance(r, BaseException)]
    assert len(failed) == 1 and "no_x13" in str(failed[0]), (failed, store.query(limit=100))
    done = [r for r in results if not isinstance(r, BaseException)]
    assert len(done) == 29
    for result in done:
        row = store.get(result.run_id)
        assert row.status == "succeeded" and row.output == result.output
    assert len(store.query(limit=100)) == 29  # the failed call's row was never written


def test_calls_in_flight_across_a_restart_all_end_recorded(
    registry: Any, store: PostgresStore, pg: pgcluster.Cluster
) -> None:
    store.insert(record("warm"))  # the pool holds connections the restart will break

    async def scenario() -> list[Any]:
        calls = asyncio.gather(
            *(
                registry.acall("plain", {"msg": f"m{i}", "seconds": 1.5}, store=store)
                for i in range(8)
            ),
            return_exceptions=True,
        )
        deadline = time.monotonic() + 60
        while len(await asyncio.to_thread(store.query, tool="plain")) < 8:  # rows written
            assert time.monotonic() < deadline, "the calls' running rows were never written"
            await asyncio.sleep(0.05)
        await asyncio.to_thread(restart, pg, "fast")
        return list(await calls)

    results = asyncio.run(scenario())
    assert not [r for r in results if isinstance(r, BaseException)]
    for result in results:
        row = store.get(result.run_id)
        assert (row.status, row.output) == ("succeeded", result.output), result.error
    assert [r.run_id for r in store.running()] == ["warm"]  # no call's run left running
