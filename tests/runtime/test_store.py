"""The SQLite run history (reliability §2.5 and §3.5)."""

from __future__ import annotations

import os
import sqlite3
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from toolctl.registry import Registry
from toolctl.runtime import StateError, api
from toolctl.runtime.history.sqlite import RunRecord, SqliteStore, owner_fields

SRC = str(Path(__file__).resolve().parents[2] / "src")


def record(run_id: str, status: str = "running", **extra: object) -> RunRecord:
    rec = RunRecord(
        run_id=run_id,
        tool="echo",
        status=status,
        tool_digest="d",
        created_at=time.time(),
        raw_input={"x": 1},
    )
    for key, value in extra.items():
        setattr(rec, key, value)
    return rec


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_files_are_private(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    store.insert(record("r1", "succeeded"))
    assert mode(tmp_path / "s.db") == 0o600
    for suffix in ("-wal", "-shm"):
        side = tmp_path / f"s.db{suffix}"
        if side.exists():
            assert mode(side) & 0o077 == 0
    store.close()


def test_default_location_is_created_private(reg: Registry) -> None:
    reg.call("add", {"a": 1, "b": 1})
    state = reg.project.state_path  # type: ignore[union-attr]
    assert state.exists() and mode(state) == 0o600 and mode(state.parent) == 0o700


def test_missing_directory_is_a_clear_error_before_the_tool_runs(
    reg: Registry, tmp_path: Path, events: list
) -> None:
    with pytest.raises(StateError, match="does not exist"):
        reg.call("echo", {"msg": "x"}, store=tmp_path / "missing" / "state.db")
    assert events == []


def test_newer_schema_is_refused(tmp_path: Path) -> None:
    db = sqlite3.connect(tmp_path / "s.db")
    db.execute("PRAGMA user_version = 99")
    db.close()
    with pytest.raises(StateError, match="schema version 99"):
        SqliteStore(tmp_path / "s.db")


def test_not_a_database(tmp_path: Path) -> None:
    (tmp_path / "s.db").write_text("hello, this is not sqlite" * 100)
    with pytest.raises(StateError, match="is not an SQLite run history"):
        SqliteStore(tmp_path / "s.db")


WRITER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {src!r})
    from toolctl.runtime.history.sqlite import SqliteStore, RunRecord
    store = SqliteStore({path!r}, sweep=False)
    for i in range(100):
        rid = f"{{sys.argv[1]}}-{{i}}"
        store.insert(RunRecord(run_id=rid, tool="t", status="running", tool_digest="d",
                               created_at=time.time()))
        assert store.update(rid, expect_status="running", status="succeeded")
""")


@pytest.mark.timeout(60)
def test_two_processes_write_concurrently(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    SqliteStore(path).close()
    script = WRITER.format(src=SRC, path=path)
    procs = [
        subprocess.Popen([sys.executable, "-c", script, name], stderr=subprocess.PIPE)
        for name in ("a", "b")
    ]
    for proc in procs:
        _, err = proc.communicate(timeout=50)
        assert proc.returncode == 0, err.decode()
    store = SqliteStore(path)
    assert len(store.query(status="succeeded", limit=1000)) == 200


def test_deferred_begin_trap_is_why_begin_immediate_is_used(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    SqliteStore(path).insert(record("r1", "suspended"))
    first = sqlite3.connect(path, timeout=5, isolation_level=None)
    second = sqlite3.connect(path, timeout=5, isolation_level=None)
    first.execute("BEGIN")  # deferred: a read snapshot first
    first.execute("SELECT status FROM runs").fetchall()
    second.execute("UPDATE runs SET status = 'running'")
    with pytest.raises(sqlite3.OperationalError, match="locked"):
        first.execute("UPDATE runs SET status = 'cancelled'")  # fails at once, despite timeout
    first.execute("ROLLBACK")
    first.execute("BEGIN IMMEDIATE")  # what the store does: take the write lock up front
    first.execute("UPDATE runs SET status = 'cancelled' WHERE status = 'running'")
    first.execute("COMMIT")
    first.close()
    second.close()


CRASHER = textwrap.dedent("""
    import os, signal, sys, time
    sys.path.insert(0, {src!r})
    from toolctl.runtime.history.sqlite import SqliteStore, RunRecord, owner_fields
    store = SqliteStore({path!r}, sweep=False)
    rec = RunRecord(run_id="crashed", tool="echo", status="running", tool_digest="d",
                    created_at=time.time(), raw_input={{"secret": "x"}})
    for k, v in owner_fields("me").items():
        setattr(rec, k, v)
    store.insert(rec)
    db = store._db
    db.execute("BEGIN IMMEDIATE")
    for i in range(20000):
        db.execute("INSERT INTO runs (run_id, tool, status, tool_digest, created_at) "
                   "VALUES (?, 't', 'running', 'd', 0)", (f"partial-{{i}}",))
    os.kill(os.getpid(), signal.SIGKILL)
""")


@pytest.mark.timeout(60)
def test_dead_process_runs_become_interrupted_and_are_never_rerun(tmp_path: Path) -> None:
    path = str(tmp_path / "s.db")
    proc = subprocess.run(
        [sys.executable, "-c", CRASHER.format(src=SRC, path=path)], capture_output=True
    )
    assert proc.returncode == -9
    store = SqliteStore(path)  # opening sweeps
    rec = store.get("crashed")
    assert rec.status == "interrupted" and rec.raw_input is None
    assert rec.error is not None and rec.error["code"] == "interrupted"
    assert "not re-run" in rec.error["message"]
    assert store.query(limit=10) == [store.get("crashed")]  # no partial rows
    assert store._db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"


def test_sweep_tells_live_owners_from_reused_pids_and_expired_leases(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "s.db")
    store.insert(record("alive", **owner_fields("o1")))
    store.insert(record("reused", **{**owner_fields("o2"), "owner_start": "1"}))
    store.insert(
        record(
            "remote-old",
            **{**owner_fields("o3"), "owner_host": "elsewhere", "lease_expires": time.time() - 1},
        )
    )
    store.insert(record("remote-new", **{**owner_fields("o4"), "owner_host": "elsewhere"}))
    assert sorted(store.sweep()) == ["remote-old", "reused"]
    assert store.get("alive").status == "running"
    assert store.get("remote-new").status == "running"


def test_record_json_is_decoded(reg: Registry) -> None:
    result = reg.call("echo", {"msg": "x"})
    rec = api.resolve_store(reg).get(result.run_id)
    assert rec.public()["input"] == {"msg": "x"} and "raw_input" not in rec.public()
    assert os.getpid() == rec.owner_pid


def test_waiting_sweeps_when_the_awaited_run_is_lost_not_every_second(tmp_path: Path) -> None:
    from toolctl.runtime.history import runs

    store = SqliteStore(tmp_path / "s.db")
    lost = {"owner_host": "elsewhere", "owner_pid": 1, "lease_expires": time.time() - 1}
    store.insert(record("lost", **{**owner_fields("gone"), **lost}))
    store.insert(record("live", **owner_fields("me")))
    store.insert(record("other-lost", **{**owner_fields("gone2"), **lost}))
    with pytest.raises(TimeoutError):
        runs.wait(store, "live", timeout=1.3)
    # the waiter on a live run left the rest of the history alone (any sweep takes care of it)
    assert store.get("other-lost").status == "running"
    assert runs.wait(store, "lost", timeout=10).status == "interrupted"
