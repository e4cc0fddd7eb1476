"""A tool's ``inputRequests``: questions answered before its handler runs, so before a
background run is queued, on the one ``ctx.ask`` machinery (Python API, ``toolctl test``,
the worker that takes the queued run, and its binding)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from toolctl.registry import Registry
from toolctl.runtime import api, clientask
from toolctl.runtime.pipeline import handoff as worker
from toolctl.runtime.result import RunStatus

WHO = {
    "method": "elicitation/create",
    "params": {
        "message": "Who should be greeted?",
        "requestedSchema": {
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "pin": {"type": "string", "writeOnly": True},
            },
        },
    },
}
ASKS = f"""\
    handler: rt_asking:greet_answered
    inputRequests:
      who: {json.dumps(WHO)}
      where: {{method: roots/list}}
"""
TOOLS = f"""\
toolctl: 1
tools:
  - name: greet_first
    description: Asks who to greet before it runs.
{ASKS}    tests:
      - name: answered
        answers:
          who: {{action: accept, content: {{name: Ada}}}}
          where: {{roots: []}}
        output: Hello, Ada!
      - name: unanswered
        answers: {{where: {{roots: []}}}}
        status: suspended
  - name: greet_later
    description: Asks who to greet before it is queued, then greets in the background.
    background: true
{ASKS}  - name: greet_approved
    description: Needs approval, then asks who to greet, then greets in the background.
    background: true
    requireApproval: true
{ASKS}"""
ADA = {"action": "accept", "content": {"name": "Ada", "pin": "4921"}}
ROOTS: dict[str, Any] = {"roots": []}


@pytest.fixture
def ran() -> Iterator[list[str]]:
    import rt_asking  # importable once a registry with the fixture path has loaded

    rt_asking.RAN.clear()
    yield rt_asking.RAN


@pytest.fixture
def areg(make_registry: Callable[[dict[str, str]], Registry]) -> Registry:
    return make_registry({"asking.yaml": TOOLS})


def _answers(**given: Any) -> dict[str, Any]:
    return {clientask.ANSWERS_KEY: given}


def test_the_questions_come_before_the_handler_and_it_gets_the_answers(
    areg: Registry, ran: list[str]
) -> None:
    first = areg.call("greet_first", {})
    assert first.status is RunStatus.SUSPENDED and ran == []  # asked; the handler never ran
    assert clientask.before_run(first.suspend_payload)
    assert clientask.pending_requests(first.suspend_payload) == ({"who": WHO, **_where()}, {})
    # a partial answer asks again for the rest only, still before the handler
    again = areg.resume(first.run_id, _answers(who=ADA))
    assert again.status is RunStatus.SUSPENDED and ran == []
    assert clientask.pending_requests(again.suspend_payload)[0] == _where()
    done = areg.resume(again.run_id, _answers(who=ADA, where=ROOTS))
    assert done.output == "Hello, Ada!" and ran == [first.run_id]
    # the answer's secret field never reaches the history
    assert "4921" not in json.dumps(api.resolve_store(areg).get(first.run_id).public())


def _where() -> dict[str, Any]:
    return {"where": {"method": "roots/list"}}


def test_answers_given_at_once_run_the_handler_in_the_same_call(
    areg: Registry, ran: list[str]
) -> None:
    on_suspend = clientask.answering({"who": {"action": "decline"}, "where": ROOTS})
    result = areg.call("greet_first", {}, on_suspend=on_suspend)
    assert result.output == "nobody to greet" and len(ran) == 1  # a decline is an answer


def test_toolctl_test_cases_answer_them(areg: Registry) -> None:
    from toolctl.testing import TestOptions, run_tests

    report = run_tests(areg, TestOptions(tools=["greet_first"]))
    got = {r.id: r.outcome.value for r in report.results}
    assert got == {"greet_first::answered": "passed", "greet_first::unanswered": "passed"}


def test_a_background_run_is_queued_only_once_answered_and_its_worker_gets_the_answers(
    areg: Registry, ran: list[str], spawned: list[tuple[str, str]]
) -> None:
    first = areg.call("greet_later", {})
    assert first.status is RunStatus.SUSPENDED and spawned == []  # nothing queued yet
    queued = areg.resume(first.run_id, _answers(who=ADA, where=ROOTS))
    assert queued.status is RunStatus.RUNNING and ran == []
    store = api.resolve_store(areg)
    assert spawned == [(first.run_id, store.get(first.run_id).owner)]
    call = worker.prepare(store, *spawned[0])
    assert call is not None and worker.finish(call) == 0
    rec = store.get(first.run_id)
    assert rec.status == "succeeded" and ran == [first.run_id]
    assert rec.model_output == {"type": "text", "value": "Hello, Ada!"}
    assert rec.raw_resume is None  # kept raw only until the run ended


def test_answers_rewritten_in_the_queue_are_refused_by_the_worker(
    areg: Registry, ran: list[str], spawned: list[tuple[str, str]]
) -> None:
    first = areg.call("greet_later", {})
    areg.resume(first.run_id, _answers(who=ADA, where=ROOTS))
    store = api.resolve_store(areg)
    forged = _answers(who={"action": "accept", "content": {"name": "Mallory"}}, where=ROOTS)
    db = sqlite3.connect(store.path)
    row = (json.dumps(forged), first.run_id)
    db.execute("UPDATE runs SET raw_resume = ? WHERE run_id = ?", row)
    db.commit()
    db.close()
    assert worker.prepare(store, *spawned[0]) is None
    rec = store.get(first.run_id)
    assert rec.status == "failed" and "modified" in rec.error["message"] and ran == []


def test_approval_comes_first_then_the_questions_then_the_queue(
    areg: Registry, ran: list[str], spawned: list[tuple[str, str]]
) -> None:
    pending = areg.call("greet_approved", {})
    assert pending.status is RunStatus.AWAITING_APPROVAL
    asked = areg.approve(pending.run_id)
    assert asked.status is RunStatus.SUSPENDED and clientask.before_run(asked.suspend_payload)
    assert spawned == []
    queued = areg.resume(pending.run_id, _answers(who=ADA, where=ROOTS))
    assert queued.status is RunStatus.RUNNING and [r for r, _ in spawned] == [pending.run_id]


def test_a_request_the_format_does_not_know_is_refused_where_it_is_written(
    make_registry: Callable[[dict[str, str]], Registry], project: Path
) -> None:
    from toolctl.loader import load_registry

    bad = TOOLS.replace("method: roots/list", "method: tools/call", 1)
    (project / "tools.d" / "asking.yaml").write_text(bad, encoding="utf-8")
    found = [d for d in load_registry().diagnostics if d.file and "asking.yaml" in d.file]
    assert found and found[0].line == 8 and "tools/call" in found[0].message
