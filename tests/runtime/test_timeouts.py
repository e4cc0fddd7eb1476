"""Timeouts that tell the truth (reliability §2.4)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from tests.runtime_helpers import own_runtime
from toolctl.registry import Registry
from toolctl.runtime import RunStatus, api

from .conftest import running


def test_in_process_sync_timeout_says_the_handler_may_still_run(reg: Registry) -> None:
    result = reg.call("sleep", {"s": 3}, timeout=0.2)
    assert result.status is RunStatus.TIMED_OUT and result.error is not None
    assert result.error.code == "timeout"
    assert any("may still be running" in n for n in result.notes)
    rec = api.resolve_store(reg).get(result.run_id)
    assert rec.status == "timed_out" and any("may still be running" in n for n in rec.notes)


@pytest.mark.timeout(30)
def test_subprocess_timeout_kills_the_process_group(reg: Registry, tmp_path: Path) -> None:
    pidfile = tmp_path / "pids"
    result = reg.call("spawner_isolated", {"pidfile": str(pidfile)}, timeout=1.5)
    assert result.status is RunStatus.TIMED_OUT
    assert any("killed" in n for n in result.notes)
    handler_pid, grandchild_pid = map(int, pidfile.read_text().split())
    for _ in range(50):
        if not running(handler_pid) and not running(grandchild_pid):
            break
        time.sleep(0.05)
    assert not running(handler_pid) and not running(grandchild_pid)


def test_subprocess_success_and_failure(reg: Registry) -> None:
    assert reg.call("add_isolated", {"a": 1, "b": 2}).output == {"sum": 3}
    failed = reg.call("fail_isolated", {})
    assert failed.status is RunStatus.FAILED and failed.error is not None
    assert "RuntimeError" in failed.error.message and "hunter2" not in failed.error.message


def test_async_timeout(reg: Registry) -> None:
    assert reg.call("async_sleep", {"s": 3}, timeout=0.1).status is RunStatus.TIMED_OUT
    result = asyncio.run(reg.acall("async_sleep", {"s": 3}, timeout=0.1))
    assert result.status is RunStatus.TIMED_OUT


def test_coroutine_swallowing_cancellation_is_still_timed_out(reg: Registry) -> None:
    result = asyncio.run(reg.acall("stubborn", {}, timeout=0.2))
    assert result.status is RunStatus.TIMED_OUT
    assert result.output is None
    assert any("ignored cancellation" in n for n in result.notes)


def test_cooperative_handler_sees_the_abort_signal(reg: Registry) -> None:
    result = asyncio.run(reg.acall("cooperative", {}, timeout=0.1))
    assert result.status is RunStatus.TIMED_OUT


def test_sync_handler_timeout_through_acall(reg: Registry) -> None:
    result = asyncio.run(reg.acall("sleep", {"s": 2}, timeout=0.1))
    assert result.status is RunStatus.TIMED_OUT


def test_declared_timeout_applies(make_registry) -> None:  # type: ignore[no-untyped-def]
    reg = make_registry(
        {
            "t.yaml": (
                "toolctl: 1\nname: slowpoke\ndescription: Slow.\nhandler: rt_handlers:sleep\n"
                "timeout: 0.1\n"
            )
        }
    )
    assert reg.call("slowpoke", {"s": 2}).status is RunStatus.TIMED_OUT


def test_stuck_threads_make_new_calls_fail_fast(
    reg: Registry, monkeypatch: pytest.MonkeyPatch
) -> None:
    # As if every handler thread were taken by calls that timed out and never returned.
    with own_runtime(handler_threads=0):
        result = reg.call("sleep", {"s": 0}, timeout=0.05)
    assert result.status is RunStatus.FAILED and result.error is not None
    assert "executor saturated" in result.error.message


def test_worker_pid_is_this_process_for_inprocess_runs(reg: Registry) -> None:
    result = reg.call("add", {"a": 1, "b": 1})
    assert api.resolve_store(reg).get(result.run_id).owner_pid == os.getpid()
