"""The ``RunStore`` contract, run against every store (memory, SQLite, PostgreSQL)."""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable
from typing import Any

import pytest

from toolctl.runtime.errors import RunNotFoundError
from toolctl.runtime.history.ownership import owner_fields
from toolctl.runtime.history.records import RunRecord, RunStore

MakeStore = Callable[..., RunStore]


def record(run_id: str, status: str = "running", **extra: Any) -> RunRecord:
    rec = RunRecord(
        run_id=run_id, tool="echo", status=status, tool_digest="d", created_at=time.time()
    )
    for key, value in extra.items():
        setattr(rec, key, value)
    return rec


def test_a_row_comes_back_as_written(make_store: MakeStore) -> None:
    store = make_store()
    rec = record(
        "r1",
        "succeeded",
        input={"text": "naïve ☃", "n": [1, 2.5, None, True], "nested": {"a": {"b": []}}},
        output={"zero": "a\u0000b", "big": 2**62, "neg": -0.5},
        error={"code": "handler_error", "message": "boom", "details": [{"type": "X"}]},
        notes=["one", "two"],
        approval={"by": "caller"},
        background=True,
        timeout=2.5,
        started_at=1.25,
        ended_at=3.5,
        duration_ms=2250.0,
        resume_count=2,
        registry={"root": "/p", "tools": ["/p/tools.d"]},
        model_output={"type": "json", "value": {"k": "v"}},
        display={"output": {"k": "v"}},
        input_hash="h",
    )
    store.insert(rec)
    assert store.get("r1") == rec


def test_ids_prefixes_and_not_found(make_store: MakeStore) -> None:
    store = make_store()
    store.insert(record("abc1", "succeeded", created_at=1.0))
    store.insert(record("abc2", "succeeded", created_at=2.0))
    store.insert(record("xyz9", "failed", created_at=3.0))
    assert store.get("xy").run_id == "xyz9"
    with pytest.raises(RunNotFoundError, match="matches several runs"):
        store.get("abc")
    with pytest.raises(RunNotFoundError, match="no run"):
        store.get("zzz")
    with pytest.raises(RunNotFoundError):
        store.get("a%")  # LIKE wildcards in a prefix are not wildcards


def test_a_prefix_with_like_wildcards_matches_them_literally(make_store: MakeStore) -> None:
    store = make_store()
    store.insert(record("a_c1", "succeeded"))
    store.insert(record("abc2", "succeeded"))
    store.insert(record("a%z3", "succeeded"))
    assert store.get("a_").run_id == "a_c1"
    assert store.get("a%").run_id == "a%z3"
    with pytest.raises(RunNotFoundError, match="no run"):
        store.get("ab_")


def test_an_unknown_field_is_the_same_error_in_every_store(make_store: MakeStore) -> None:
    store = make_store()
    store.insert(record("r1"))
    with pytest.raises(ValueError, match="unknown run fields: \\['colour'\\]"):
        store.update("r1", colour="red")
    assert store.get("r1").status == "running"


def test_query_orders_newest_first_and_filters(make_store: MakeStore) -> None:
    store = make_store()
    for i, status in enumerate(["succeeded", "failed", "succeeded", "succeeded"]):
        store.insert(record(f"r{i}", status, created_at=float(i), tool="a" if i < 3 else "b"))
    assert [r.run_id for r in store.query()] == ["r3", "r2", "r1", "r0"]
    assert [r.run_id for r in store.query(status="succeeded", tool="a")] == ["r2", "r0"]
    assert [r.run_id for r in store.query(limit=2)] == ["r3", "r2"]
    assert store.query(tool="none") == []


def test_runs_started_at_the_same_time_list_in_the_same_order(make_store: MakeStore) -> None:
    store = make_store()
    for run_id in ["b", "a", "c"]:
        store.insert(record(run_id, "succeeded", created_at=5.0))
    assert [r.run_id for r in store.query()] == ["c", "b", "a"]


def test_update_is_compare_and_set(make_store: MakeStore) -> None:
    store = make_store()
    store.insert(record("r1", "suspended", owner="me"))
    assert not store.update("r1", expect_status="running", status="cancelled")
    assert not store.update("r1", expect_status=("running", "awaiting_approval"), status="x")
    assert not store.update("r1", expect_owner="someone-else", status="x")
    assert store.update("r1", expect_status=("running", "suspended"), status="running")
    assert not store.update("r1", expect_status="suspended", status="running")
    assert store.update("r1", expect_owner="me", durable=True, output={"done": True})
    assert not store.update("missing", status="running")
    got = store.get("r1")
    assert (got.status, got.output) == ("running", {"done": True})


def test_a_claim_happens_once_among_racing_threads(make_store: MakeStore) -> None:
    handles = [make_store() for _ in range(4)]
    handles[0].insert(record("r1", "awaiting_approval"), durable=True)
    wins: list[int] = []
    start = threading.Barrier(len(handles) * 2)

    def claim(i: int) -> None:
        start.wait()
        if handles[i % len(handles)].update(
            "r1", expect_status="awaiting_approval", durable=True, status="running", owner=str(i)
        ):
            wins.append(i)

    threads = [threading.Thread(target=claim, args=(i,)) for i in range(len(handles) * 2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(wins) == 1
    assert handles[1].get("r1").owner == str(wins[0])


def test_sweep_interrupts_runs_of_dead_owners_only(make_store: MakeStore) -> None:
    store = make_store()
    alive = owner_fields("alive")
    dead = {**owner_fields("dead"), "owner_pid": _dead_pid()}
    elsewhere_live = {**owner_fields("far"), "owner_host": "another-host", "owner_pid": 1}
    elsewhere_expired = {**elsewhere_live, "owner": "far-gone", "lease_expires": time.time() - 1}
    store.insert(record("live", **alive))
    store.insert(record("dead", **dead))
    store.insert(record("far", **elsewhere_live))
    store.insert(record("gone", **elsewhere_expired))
    store.insert(record("done", "succeeded", **dead))
    swept = store.sweep()
    if store.__class__.__name__ == "MemoryStore":
        assert swept == []  # a process-local store has no other owners
        return
    assert sorted(swept) == ["dead", "gone"]
    assert store.get("dead").status == "interrupted"
    assert store.get("dead").error["code"] == "interrupted"  # type: ignore[index]
    assert store.get("live").status == "running"
    assert store.get("far").status == "running"
    assert store.get("done").status == "succeeded"
    assert store.sweep() == []


def _dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid
