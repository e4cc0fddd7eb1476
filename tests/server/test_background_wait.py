"""A call waiting on a background run over MCP: a run whose worker died ends ``interrupted``,
found by a sweep that runs only when the awaited run has lost its owner."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.runtime.test_store import record
from toolctl.registry import Registry
from toolctl.runtime import RunResult, RunStatus
from toolctl.runtime.history.sqlite import SqliteStore, owner_fields
from toolctl.server import background


def test_a_lost_background_run_ends_interrupted_and_sweeps_nothing_else(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = SqliteStore(tmp_path / "s.db")
    lost = {"owner_host": "elsewhere", "owner_pid": 1, "lease_expires": time.time() - 1}
    store.insert(record("lost", **{**owner_fields("gone"), **lost}))
    store.insert(record("live", **owner_fields("me")))
    store.insert(record("other-lost", **{**owner_fields("gone2"), **lost}))
    monkeypatch.setattr("toolctl.runtime.api.resolve_store", lambda registry: store)
    monkeypatch.setattr(background, "SWEEP_EVERY", 0.05)
    registry = Registry({})

    def started(run_id: str) -> Any:
        return RunResult(run_id=run_id, tool="echo", status=RunStatus.RUNNING)

    async def wait(run_id: str) -> RunResult:
        return await background.wait_for_run(registry, started(run_id), None, progress=False)  # type: ignore[arg-type]

    async def live_for_a_while() -> None:
        with anyio.move_on_after(0.6):
            await wait("live")

    anyio.run(live_for_a_while)
    assert store.get("other-lost").status == "running"  # a live run's waiter swept nothing
    assert anyio.run(wait, "lost").status is RunStatus.INTERRUPTED
