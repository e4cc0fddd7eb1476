"""Which history writes wait for the disk: ordinary ones use ``synchronous=NORMAL`` (cheap, safe
across a process crash), the transitions that must survive a power loss use ``FULL``."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolctl.registry import Registry
from toolctl.runtime import RunStatus
from toolctl.runtime.history import runs
from toolctl.runtime.history.sqlite import SqliteStore

pytestmark = pytest.mark.timeout(60)


class Writes:
    """The store's writes, each with the synchronous mode it was committed under."""

    def __init__(self, store: SqliteStore) -> None:
        self.mode = "NORMAL"
        self.log: list[tuple[str, str]] = []
        store._db.set_trace_callback(self._seen)

    def _seen(self, sql: str) -> None:
        pragma = re.match(r"PRAGMA synchronous = (\w+)", sql)
        if pragma:
            self.mode = pragma.group(1)
        elif sql.startswith(("INSERT", "UPDATE")):
            self.log.append((self.mode, sql))

    def durable(self, needle: str) -> list[bool]:
        """For each write mentioning ``needle``: was it committed with FULL?"""
        return [mode == "FULL" for mode, sql in self.log if needle in sql]

    def take(self) -> list[tuple[str, str]]:
        done, self.log = self.log, []
        return done


@pytest.fixture
def store(tmp_path: Path) -> SqliteStore:
    return SqliteStore(tmp_path / "state.db")


def test_ordinary_runs_do_not_wait_for_the_disk(reg: Registry, store: SqliteStore) -> None:
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # NORMAL
    writes = Writes(store)
    assert reg.call("add", {"a": 1, "b": 2}, store=store).ok
    assert [mode for mode, _ in writes.take()] == ["NORMAL", "NORMAL"]  # running, succeeded


def _approve(reg: Registry, run_id: str, store: SqliteStore) -> Any:
    return reg.approve(run_id, store=store)


def _resume(reg: Registry, run_id: str, store: SqliteStore) -> Any:
    return reg.resume(run_id, {"answer": "yes"}, store=store)


@pytest.mark.parametrize(
    ("tool", "sent", "pending", "go_on"),
    [
        ("approve_echo", {"msg": "hi"}, RunStatus.AWAITING_APPROVAL, _approve),
        ("ask", {"target": "prod"}, RunStatus.SUSPENDED, _resume),
    ],
    ids=["approval", "suspend"],
)
def test_a_pending_run_and_its_claim_survive_a_power_loss(
    reg: Registry,
    store: SqliteStore,
    tool: str,
    sent: dict[str, str],
    pending: RunStatus,
    go_on: Callable[[Registry, str, SqliteStore], Any],
) -> None:
    writes = Writes(store)
    result = reg.call(tool, sent, store=store)
    assert result.status is pending
    assert writes.durable(f"'{pending.value}'") == [True]
    writes.take()
    assert go_on(reg, result.run_id, store).ok
    claim, finished = writes.take()
    assert claim[0] == "FULL" and f"status = '{pending.value}'" in claim[1]
    assert finished[0] == "NORMAL" and "'succeeded'" in finished[1]
    assert store._db.execute("PRAGMA synchronous").fetchone()[0] == 1  # back to NORMAL


def test_background_start_survives_a_power_loss(reg: Registry, store: SqliteStore) -> None:
    writes = Writes(store)
    started = reg.call("bg", {"s": 0}, store=store)
    assert started.status is RunStatus.RUNNING
    first = writes.take()[0]
    assert first[0] == "FULL" and first[1].startswith("INSERT")
    assert runs.wait(store, started.run_id, timeout=30).status == "succeeded"
