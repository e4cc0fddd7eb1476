"""The history writer (issue 16 item 5): writes waiting for the writer thread commit together, and
a write that fails in a batch costs nobody else's row; a deferred running row (the timer
thread) comes before the final row."""

from __future__ import annotations

import asyncio
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from toolctl.errors import ToolctlError
from toolctl.registry import Registry
from toolctl.runtime import api
from toolctl.runtime.history import writer as history
from toolctl.runtime.history.sqlite import RunRecord, SqliteStore
from toolctl.runtime.resources import current


def record(run_id: str) -> RunRecord:
    return RunRecord(
        run_id=run_id, tool="echo", status="succeeded", tool_digest="d", created_at=time.time()
    )


def job(store: SqliteStore, fn: Any) -> history._Job:
    return history._Job(fn, store, None, None)


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    return SqliteStore(tmp_path / "s.db")


def _committed(store: SqliteStore) -> list[str]:
    """The run ids another connection sees (what a commit made durable)."""
    other = sqlite3.connect(store.path)
    try:
        return sorted(r[0] for r in other.execute("SELECT run_id FROM runs"))
    finally:
        other.close()


def test_a_failed_write_in_a_batch_loses_nothing_else(store: SqliteStore) -> None:
    store.insert(record("taken"))
    jobs = [
        job(store, lambda: store.insert(record("a"))),
        job(store, lambda: store.insert(record("taken"))),  # the run id exists: it fails
        job(store, lambda: store.update("a", status="cancelled")),
        job(store, lambda: store.insert(record("b"))),
    ]
    history.run_batch(jobs)
    assert isinstance(jobs[1].error, ToolctlError)
    assert [j.error for j in (jobs[0], jobs[2], jobs[3])] == [None, None, None]
    assert jobs[2].value is True
    assert _committed(store) == ["a", "b", "taken"]
    assert store.get("a").status == "cancelled"


def test_a_failure_that_aborts_the_transaction_fails_every_write_before_it(
    store: SqliteStore,
) -> None:
    # A full disk or an I/O error makes SQLite roll the whole transaction back: the writes
    # before the failure are gone, so they must not report success.
    def aborting() -> None:
        store._db.execute("ROLLBACK")  # what SQLite does on SQLITE_FULL
        raise sqlite3.OperationalError("database or disk is full")

    jobs = [
        job(store, lambda: store.insert(record("a"))),
        job(store, aborting),
        job(store, lambda: store.insert(record("b"))),
    ]
    history.run_batch(jobs)
    assert isinstance(jobs[0].error, sqlite3.OperationalError)
    assert isinstance(jobs[1].error, sqlite3.OperationalError)
    assert jobs[2].error is None  # committed on its own after the abort
    assert _committed(store) == ["b"]


def test_a_durable_write_in_a_batch_is_committed_durably(store: SqliteStore) -> None:
    seen: list[int] = []

    def durable() -> None:
        store.insert(record("pending"), durable=True)
        seen.append(store._db.execute("PRAGMA synchronous").fetchone()[0])

    jobs = [
        job(store, lambda: store.insert(record("a"))),
        job(store, durable),
        job(store, lambda: store.insert(record("b"))),
    ]
    history.run_batch(jobs)
    assert [j.error for j in jobs] == [None, None, None]
    assert _committed(store) == ["a", "b", "pending"]
    assert seen == [1]  # back to NORMAL after the durable commit


def test_concurrent_calls_keep_their_rows_when_one_write_fails(
    reg: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = api.resolve_store(reg)
    assert isinstance(store, SqliteStore)
    update = store.update

    def failing_for_x13(run_id: str, **changes: Any) -> bool:
        if changes.get("output") == {"msg": "x13"}:
            raise sqlite3.OperationalError("disk I/O error")
        return update(run_id, **changes)

    monkeypatch.setattr(store, "update", failing_for_x13)
    # as if other calls were in flight: the writer thread writes
    monkeypatch.setattr(current().history, "active", 5)

    async def burst() -> list[Any]:
        calls = [reg.acall("echo", {"msg": f"x{i}"}) for i in range(30)]
        return list(await asyncio.gather(*calls, return_exceptions=True))

    results = asyncio.run(burst())
    failed = [r for r in results if isinstance(r, BaseException)]
    assert len(failed) == 1 and "disk I/O error" in str(failed[0])
    for result in results:
        if not isinstance(result, BaseException):
            rec = store.get(result.run_id)
            assert rec.status == "succeeded" and rec.output == result.output


def test_writes_handed_over_before_exit_still_happen(store: SqliteStore) -> None:
    writer = history._Writer()
    release = threading.Event()
    writer.submit(job(store, lambda: release.wait(10)))
    for name in ("a", "b"):
        writer.submit(job(store, lambda name=name: store.insert(record(name))))
    release.set()
    writer.stop()  # what the exit hook does: the queue is drained first
    assert _committed(store) == ["a", "b"]


def test_a_write_waits_for_the_writes_of_the_other_calls_in_flight(store: SqliteStore) -> None:
    batches: list[int] = []
    pauses: list[float] = []

    def arriving(seconds: float) -> None:  # the other two calls' rows come while it waits
        pauses.append(seconds)
        for name in ("b", "c"):
            writer.submit(job(store, lambda name=name: store.insert(record(name))))

    writer = history._Writer(lambda: 3, pause=arriving)  # three calls in flight
    commits = store._commits
    writer.submit(job(store, lambda: batches.append(len(_committed(store)))))
    writer.stop()
    assert pauses == [history.GATHER_S] and batches == [0]
    assert _committed(store) == ["b", "c"] and store._commits == commits + 1  # one commit


def test_a_lone_call_s_write_does_not_wait(store: SqliteStore) -> None:
    pauses: list[float] = []
    writer = history._Writer(lambda: 1, pause=pauses.append)
    writer.submit(job(store, lambda: store.insert(record("a"))))
    writer.stop()
    assert pauses == [] and _committed(store) == ["a"]


def test_a_write_to_a_store_that_cannot_batch_does_not_wait() -> None:
    pauses: list[float] = []
    done: list[str] = []
    writer = history._Writer(lambda: 3, pause=pauses.append)  # (PostgreSQL: one commit each)
    writer.submit(history._Job(lambda: done.append("a"), None, None, None))
    writer.stop()
    assert pauses == [] and done == ["a"]


def test_commits_are_checkpointed_into_the_database_file_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolctl.runtime.history import checkpoint

    monkeypatch.setattr(checkpoint, "EVERY_COMMITS", 20)
    store = SqliteStore(tmp_path / "s.db")
    empty = store.path.stat().st_size
    for i in range(200):  # far below SQLite's own (backstop) checkpoint
        store.insert(record(f"r{i}"))
    deadline = time.monotonic() + 20
    while store.path.stat().st_size == empty:  # the rows reach the file, not only the log
        assert time.monotonic() < deadline, "no checkpoint happened"
        time.sleep(0.01)
    assert len(_committed(store)) == 200
    store.close()


def test_a_checkpoint_never_creates_a_history(tmp_path: Path) -> None:
    from toolctl.runtime.history import checkpoint

    with pytest.raises(sqlite3.Error):
        checkpoint.checkpoint(str(tmp_path / "gone.db"))
    assert not (tmp_path / "gone.db").exists()


def test_a_failed_write_whose_caller_was_cancelled_is_logged(
    store: SqliteStore, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    # other calls in flight: the writer thread writes
    monkeypatch.setattr(current().history, "active", 5)
    started, release = threading.Event(), threading.Event()
    cancelled: list[str] = []

    def failing() -> None:
        started.set()
        release.wait(10)
        raise sqlite3.OperationalError("disk I/O error")

    async def cancel_the_caller() -> None:
        task = asyncio.create_task(
            history.write(failing, store=store, if_cancelled=lambda: cancelled.append("x"))
        )
        while not started.is_set():
            await asyncio.sleep(0.01)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        release.set()
        while not cancelled:  # the writer has run the failed write and the cancellation's
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.05)  # the settling call the writer queued on this loop

    asyncio.run(cancel_the_caller())
    failures = [r for r in caplog.records if "disk I/O error" in (r.exc_text or "")]
    assert len(failures) == 1 and "caller has gone" in failures[0].getMessage()


def test_a_failed_write_whose_loop_has_closed_is_logged(
    store: SqliteStore, caplog: pytest.LogCaptureFixture
) -> None:
    loop = asyncio.new_event_loop()
    gone = history._Job(lambda: None, store, loop, loop.create_future())
    loop.close()  # its caller's loop ended (asyncio.run returned) before the write was settled
    gone.error = sqlite3.OperationalError("database is locked")
    history._settle_all([gone])
    assert "caller has gone" in caplog.text and "database is locked" in caplog.text
