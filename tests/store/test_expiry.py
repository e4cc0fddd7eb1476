"""Pending runs nobody answers expire after ``run.approvalTtl`` (issue 21, D7), in every store:
the run ends ``cancelled`` with an ``expired`` error that says why, its raw input is dropped,
and an answer that lands first wins."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.store.test_contract import record
from toolctl.config import DEFAULT_APPROVAL_TTL_S, approval_ttl
from toolctl.errors import ConfigError
from toolctl.runtime.history.expiry import expire_pending

DAY = 86_400.0


def _pending(store: Any, run_id: str, status: str, age: float) -> None:
    store.insert(
        record(run_id, status, created_at=time.time() - age, raw_input={"x": 1}), durable=True
    )


def test_old_pending_runs_expire_and_young_ones_wait(make_store: Callable[..., Any]) -> None:
    store = make_store()
    _pending(store, "old-approval", "awaiting_approval", 8 * DAY)
    _pending(store, "old-suspended", "suspended", 8 * DAY)
    _pending(store, "young", "awaiting_approval", 1 * DAY)
    store.insert(record("done", "succeeded", created_at=time.time() - 30 * DAY))

    assert sorted(expire_pending(store, 7 * DAY)) == ["old-approval", "old-suspended"]
    for run_id, said in (("old-approval", "approved or declined"), ("old-suspended", "resumed")):
        got = store.get(run_id)
        assert got.status == "cancelled" and got.raw_input is None and got.ended_at
        assert got.error["code"] == "expired"
        assert said in got.error["message"] and "run.approvalTtl (7d)" in got.error["message"]
    assert store.get("young").status == "awaiting_approval"
    assert store.get("done").status == "succeeded"
    assert expire_pending(store, 7 * DAY) == []  # nothing twice


def test_an_answer_that_lands_first_wins(make_store: Callable[..., Any]) -> None:
    """The expiry is a compare-and-set on the status it read: a run approved meanwhile runs."""
    store = make_store()
    _pending(store, "raced", "awaiting_approval", 8 * DAY)
    real_query = store.query

    def query_then_approve(**kwargs: Any) -> Any:
        rows = real_query(**kwargs)
        if kwargs.get("status") == "awaiting_approval":  # approved between read and write
            store.update("raced", expect_status="awaiting_approval", status="running")
        return rows

    store.query = query_then_approve
    try:
        assert expire_pending(store, 7 * DAY) == []
    finally:
        del store.query
    assert store.get("raced").status == "running"


@pytest.mark.parametrize(
    ("value", "seconds"),
    [("7d", 7 * DAY), ("12h", 43_200.0), ("30m", 1800.0), ("45s", 45.0), (3600, 3600.0)],
)
def test_approval_ttl_takes_durations(value: object, seconds: float) -> None:
    assert approval_ttl({"run": {"approvalTtl": value}}, lambda: "x") == seconds
    assert approval_ttl({}, lambda: "x") == DEFAULT_APPROVAL_TTL_S == 7 * DAY


@pytest.mark.parametrize("value", ["7 days", "0d", "-1h", "", 0, -5, True, 1.5, None, "7w"])
def test_an_unusable_approval_ttl_is_a_clear_error(value: object) -> None:
    with pytest.raises(ConfigError) as caught:
        approval_ttl({"run": {"approvalTtl": value}}, lambda: "toolctl.yaml:3:3: run")
    assert caught.value.message.startswith("toolctl.yaml:3:3: run: run.approvalTtl must be")
    assert repr(value) in caught.value.message and "7d" in (caught.value.hint or "")


def test_the_project_check_names_the_file(tmp_path: Path) -> None:
    from toolctl.config import find_project

    (tmp_path / "tools.d").mkdir()
    (tmp_path / "toolctl.yaml").write_text("tools: tools.d\nrun:\n  approvalTtl: soon\n")
    with pytest.raises(ConfigError) as caught:
        find_project(tmp_path)
    assert "toolctl.yaml" in caught.value.message and "'soon'" in caught.value.message
