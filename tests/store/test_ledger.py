"""The run ledger's promises, against every store (memory, SQLite, PostgreSQL).

* a pending run is approved or resumed at most once, however many callers race for it;
* a ``running`` row is never lost: its owner's final write, a cancellation or a sweep ends it,
  and a final write never overwrites a cancellation;
* a non-idempotent tool's run executes at most once: a lost one is ``interrupted``, never
  handed to another worker, and a handed-off run is taken by one worker only;
* approve and resume do their store I/O off the event loop;
* the ledger is the only code that changes a run's status.
"""

from __future__ import annotations

import asyncio
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import toolctl
from tests.runtime.conftest import FIXTURES, write_project
from tests.store.test_contract import _dead_pid, record
from toolctl.registry import Registry
from toolctl.runtime import RunStateError
from toolctl.runtime.history import ledger
from toolctl.runtime.history.ownership import owner_fields
from toolctl.runtime.history.records import RunStore
from toolctl.runtime.history.sqlite import SqliteStore
from toolctl.runtime.pending import aapprove

MakeStore = Callable[..., RunStore]
RACERS = 8
SRC = Path(__file__).resolve().parents[2] / "src" / "toolctl"


def _race(make_store: MakeStore, kind: str, attempt: Callable[[RunStore, int], bool]) -> list[int]:
    """``attempt(store, i)`` from RACERS threads at once, each on its own store handle (another
    process, for the SQL stores); the indexes that won."""
    options = {} if kind == "memory" else {"sweep": False}
    stores = [make_store(**options) for _ in range(RACERS)]
    start = threading.Barrier(RACERS)
    won: list[int] = []

    def run(i: int) -> None:
        start.wait()
        if attempt(stores[i], i):
            won.append(i)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(RACERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return won


@pytest.mark.parametrize("pending", ["awaiting_approval", "suspended"])
def test_a_pending_run_is_claimed_at_most_once(
    make_store: MakeStore, kind: str, pending: str
) -> None:
    first = make_store()
    first.insert(record("p1", pending), durable=True)

    def claim(store: RunStore, i: int) -> bool:
        row = {"resume_count": 1} if pending == "suspended" else {"approval": {"by": f"u{i}"}}
        return ledger.claim(store, "p1", expect=pending, owner=f"o{i}", lease=60, row=row)  # type: ignore[arg-type]

    won = _race(make_store, kind, claim)
    assert len(won) == 1
    rec = first.get("p1")
    assert rec.status == "running" and rec.owner == f"o{won[0]}"
    assert rec.binding is None  # the claimed run's data is no longer pending


def test_a_handed_off_run_is_taken_by_one_worker(make_store: MakeStore, kind: str) -> None:
    first = make_store()
    first.insert(record("b1", background=True, **owner_fields("queued-token")), durable=True)
    won = _race(make_store, kind, lambda st, i: ledger.take(st, "b1", "queued-token", f"w{i}", 30))
    assert len(won) == 1
    assert first.get("b1").owner == f"w{won[0]}"
    # a duplicate (or retried) job of the same hand-off finds the token gone: it never runs
    assert not ledger.take(first, "b1", "queued-token", "late-worker", 30)


def test_a_final_write_never_overwrites_a_cancellation(make_store: MakeStore) -> None:
    store = make_store()
    store.insert(record("c1", background=True, **owner_fields("me")))
    assert ledger.cancel(store, store.get("c1"))
    found = ledger.settle(store, "c1", {"status": "succeeded"}, status="running", owner="me")
    assert found == "cancelled"
    rec = store.get("c1")
    assert rec.status == "cancelled" and rec.error is not None
    assert rec.error["code"] == "cancelled" and rec.owner is None


def test_the_owner_ends_its_running_row(make_store: MakeStore) -> None:
    store = make_store()
    store.insert(record("f1", **owner_fields("me")))
    assert ledger.settle(store, "f1", {"status": "failed"}, status="running", owner="other")
    assert store.get("f1").status == "running"  # another owner's write lost
    assert ledger.settle(store, "f1", {"status": "succeeded"}, status="running", owner="me") is None
    assert store.get("f1").status == "succeeded"


def test_a_lost_running_row_is_swept_and_never_rerun(make_store: MakeStore, kind: str) -> None:
    store = make_store()
    dead = {**owner_fields("dead"), "owner_pid": _dead_pid()}
    # a background run of a tool that is not idempotent, its worker gone
    store.insert(record("lost", background=True, registry={"idempotent": False}, **dead))
    store.insert(record("live", **owner_fields("alive")))
    swept = ledger.sweep(store)
    if kind == "memory":
        assert swept == []  # a process-local store: every owner is this process
        return
    assert swept == ["lost"]
    rec = store.get("lost")
    assert rec.status == "interrupted" and rec.error is not None
    assert "not re-run" in rec.error["message"]
    assert store.get("live").status == "running"
    # the dead owner's token no longer holds it: nothing can take it to run it again
    assert not ledger.take(store, "lost", "dead", "w", 30)
    assert ledger.sweep(store) == []


def test_a_run_elsewhere_is_swept_only_after_its_lease(make_store: MakeStore, kind: str) -> None:
    store = make_store()
    far = {**owner_fields("far"), "owner_host": "another-host", "owner_pid": 1}
    store.insert(record("leased", **far))
    store.insert(record("expired", **{**far, "owner": "x", "lease_expires": time.time() - 1}))
    assert ledger.sweep(store) == ([] if kind == "memory" else ["expired"])
    assert store.get("leased").status == "running"


# ---------------------------------------------------------------- through the public API


@pytest.fixture
def reg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    root = write_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(FIXTURES))
    return toolctl.load()


def test_racing_approvals_run_the_handler_once_off_the_event_loop(
    reg: Registry, make_store: MakeStore, kind: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import rt_handlers  # type: ignore[import-not-found]

    rt_handlers.EVENTS.clear()
    store = make_store()
    pending = reg.call("approve_echo", {"msg": "hi"}, store=store)
    assert pending.status.value == "awaiting_approval"
    claims: list[int] = []
    update = store.update

    def spy(run_id: str, **kwargs: Any) -> bool:
        if kwargs.get("expect_status") == "awaiting_approval":
            claims.append(threading.get_ident())
        return update(run_id, **kwargs)

    monkeypatch.setattr(store, "update", spy)  # this store object only

    async def both() -> tuple[list[Any], int]:
        loop_thread = threading.get_ident()
        results = await asyncio.gather(
            *(aapprove(reg, pending.run_id, store=store) for _ in range(3)),
            return_exceptions=True,
        )
        return results, loop_thread

    results, loop_thread = asyncio.run(both())
    done = [r for r in results if not isinstance(r, BaseException)]
    refused = [r for r in results if isinstance(r, RunStateError)]
    assert len(done) == 1 and len(refused) == 2, results
    assert done[0].status.value == "succeeded"
    ran = [e for e in rt_handlers.EVENTS if e == ("handler", {"msg": "hi"})]
    assert len(ran) == 1
    assert claims, "the claim went through the ledger"
    if kind != "memory":  # the durable claim's I/O never blocked the event loop
        assert loop_thread not in claims


@pytest.mark.parametrize(
    ("tool", "status"), [("approve_echo", "awaiting_approval"), ("ask", "suspended")]
)
def test_a_run_going_pending_is_stored_off_the_event_loop_even_alone(
    reg: Registry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, tool: str, status: str
) -> None:
    # off_loop treats every store with a history alike: SQLite stands for PostgreSQL here
    store = SqliteStore(tmp_path / "state.db")
    durable: list[int] = []
    for name in ("insert", "update"):
        method = getattr(store, name)

        def spy(*args: Any, _method: Any = method, **kwargs: Any) -> Any:
            if kwargs.get("durable"):
                durable.append(threading.get_ident())
            return _method(*args, **kwargs)

        monkeypatch.setattr(store, name, spy)  # this store object only

    async def alone() -> tuple[Any, int]:
        result = await reg.acall(tool, {"msg": "hi", "target": "t"}, store=store)
        return result, threading.get_ident()

    result, loop_thread = asyncio.run(alone())
    assert result.status.value == status, result.error
    assert store.get(result.run_id).status == status
    assert durable, "the pending row is a durable write"
    assert loop_thread not in durable  # the fsync / round trip never blocked the event loop
    store.close()


# ---------------------------------------------------------------- one owner


def _files_matching(pattern: str) -> set[str]:
    found = set()
    for path in SRC.rglob("*.py"):
        if re.search(pattern, path.read_text(encoding="utf-8")):
            found.add(str(path.relative_to(SRC)))
    return found


def test_only_the_ledger_changes_a_runs_status() -> None:
    # a compare-and-set on the status is a status transition: the ledger's alone
    assert _files_matching(r"expect_status=") == {"runtime/history/ledger.py"}


def test_no_store_is_probed_by_attribute_or_class_name() -> None:
    probes = (
        r"hasattr\((self\.)?store|getattr\((self\.)?store,|type\((self\.)?store\)"
        r"|isinstance\([^)]*MemoryStore"
    )
    assert _files_matching(probes) == set()
