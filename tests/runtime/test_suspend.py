"""Suspend and resume: validation, transforms, at-most-once resume, isolation."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from toolctl.registry import Registry
from toolctl.runtime import RunStateError, RunStatus, api
from toolctl.runtime.history.sqlite import SqliteStore


def test_suspend_then_resume(reg: Registry) -> None:
    first = reg.call("ask", {"target": "prod"})
    assert first.status is RunStatus.SUSPENDED
    assert first.suspend_payload == {"question": "deploy prod?"}
    assert first.display["suspend"] == "Q: deploy prod?"
    assert first.transcript["suspend"] == {"question": "deploy prod?"}
    store = api.resolve_store(reg)
    rec = store.get(first.run_id)
    assert rec.status == "suspended" and rec.raw_input == {"target": "prod"}
    assert rec.suspend == {"question": "deploy prod?"}
    done = reg.resume(first.run_id, {"answer": "yes"})
    assert done.status is RunStatus.SUCCEEDED
    assert done.output == {"target": "prod", "answer": "yes"}
    assert done.display["resume"] == "A: yes"
    assert done.transcript["resume"] == {"answer": "[REDACTED]"}
    rec = store.get(first.run_id)
    assert rec.status == "succeeded" and rec.raw_input is None and rec.resume_count == 1
    assert rec.input == {"target": "prod"} and rec.resume == {"answer": "[REDACTED]"}


def test_invalid_resume_data_keeps_the_run_suspended(reg: Registry) -> None:
    first = reg.call("ask", {"target": "prod"})
    bad = reg.resume(first.run_id, {"answer": 3})
    assert bad.status is RunStatus.SUSPENDED and bad.error is not None
    assert bad.error.code == "invalid_resume" and bad.error.details[0]["path"] == "/answer"
    bad = reg.resume(first.run_id, '{"answer": "a", "answer": "b"}')
    assert bad.error is not None and "duplicate key" in bad.error.message
    assert reg.resume(first.run_id, {"answer": "ok"}).ok


def test_resuming_twice_runs_the_handler_once(reg: Registry, events: list) -> None:
    import rt_handlers

    first = reg.call("ask", {"target": "prod"})
    reg.resume(first.run_id, {"answer": "yes"})
    with pytest.raises(RunStateError, match="already resumed"):
        reg.resume(first.run_id, {"answer": "yes"})
    assert rt_handlers.CALLS["suspender"] == 2  # the first call and one resume


def test_concurrent_resume_executes_exactly_once(reg: Registry, events: list) -> None:
    import rt_handlers

    first = reg.call("slow_resume", {})
    path = api.resolve_store(reg).path
    outcomes: list[Any] = []
    barrier = threading.Barrier(4)

    def worker() -> None:
        own = SqliteStore(path)  # a connection of its own, like another process
        barrier.wait()
        try:
            outcomes.append(reg.resume(first.run_id, {}, store=own).status)
        except RunStateError as exc:
            outcomes.append(str(exc))

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count(RunStatus.SUCCEEDED) == 1
    assert sum("already resumed" in str(o) for o in outcomes) == 3
    assert rt_handlers.CALLS["slow_resume"] == 2


def test_bad_suspend_payload_fails_the_run(reg: Registry) -> None:
    result = reg.call("bad_suspend", {})
    assert result.status is RunStatus.FAILED and result.error is not None
    assert "suspendSchema" in result.error.message
    assert api.resolve_store(reg).get(result.run_id).status == "failed"


def test_on_suspend_resumes_in_the_same_call(reg: Registry) -> None:
    async def answer(payload: Any, schema: Any) -> dict[str, str]:
        assert payload == {"question": "deploy prod?"} and schema["required"] == ["answer"]
        return {"answer": "inline"}

    result = asyncio.run(reg.acall("ask", {"target": "prod"}, on_suspend=answer))
    assert result.status is RunStatus.SUCCEEDED and result.output["answer"] == "inline"


def test_suspend_and_resume_in_a_subprocess(reg: Registry) -> None:
    first = reg.call("suspend_isolated", {"target": "x"})
    assert first.status is RunStatus.SUSPENDED
    done = reg.resume(first.run_id, {"answer": "go"})
    assert done.output == {"target": "x", "answer": "go"}


def test_resume_of_unknown_or_finished_runs(reg: Registry) -> None:
    from toolctl.runtime import RunNotFoundError

    with pytest.raises(RunNotFoundError):
        reg.resume("nope", {})
    ok = reg.call("add", {"a": 1, "b": 1})
    with pytest.raises(RunStateError, match="not suspended"):
        reg.resume(ok.run_id, {})


def test_a_failing_on_suspend_leaves_the_run_suspended(reg: Registry) -> None:
    async def broken(payload: Any, schema: Any) -> None:
        raise ConnectionError("client went away")

    result = asyncio.run(reg.acall("ask", {"target": "x"}, on_suspend=broken))
    assert result.status is RunStatus.SUSPENDED
    assert any("on_suspend failed" in n for n in result.notes)
    assert reg.resume(result.run_id, {"answer": "later"}).ok


def test_cancel_a_suspended_run(reg: Registry) -> None:
    from toolctl.runtime.history import runs

    first = reg.call("ask", {"target": "prod"})
    rec = runs.cancel(api.resolve_store(reg), first.run_id)
    assert rec.status == "cancelled" and rec.raw_input is None
    with pytest.raises(RunStateError, match="not suspended"):
        reg.resume(first.run_id, {"answer": "yes"})
