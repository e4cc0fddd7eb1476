"""The runner end to end: cases through the real call pipeline, selection, safety, fuzzing."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from toolctl.diagnostics import Location
from toolctl.loader import load_registry
from toolctl.testing import TestOptions, run_tests
from toolctl.testing.cases import TestCase
from toolctl.testing.fuzz import INVALID, fuzz_tool
from toolctl.testing.runner import Runner, temporary_store
from toolctl.yamlsrc import loads

pytestmark = pytest.mark.timeout(60)


def outcomes(report: Any) -> dict[str, str]:
    return {r.id: r.outcome.value for r in report.results}


def test_every_fixture_case_passes(project: Path) -> None:
    report = run_tests(load_registry(), TestOptions())
    assert report.ok
    got = outcomes(report)
    assert got["add::skipped case"] == "skipped"
    assert got["add::inputExamples[0] small numbers"] == "passed"
    assert got["ask::resumed with yes"] == "passed"
    assert got["survey::answered in two rounds"] == "passed"  # answers: ctx.elicit, ctx.sample
    assert got["survey::an unanswered request leaves the run suspended"] == "passed"
    assert got["nap::times out"] == "passed"
    assert got["login::missing password is rejected"] == "passed"
    assert report.counts()["passed"] == len(got) - 1


def test_the_users_run_history_is_never_touched(project: Path) -> None:
    run_tests(load_registry(), TestOptions())
    assert not (project / ".toolctl").exists()


def test_approval_gated_handler_runs_only_with_approve_true(project: Path) -> None:
    marks = {k: project / f"{k}.txt" for k in ("plain", "declined", "approved")}
    (project / "tools.d" / "gate.yaml").write_text(f"""\
toolctl: 1
name: gate
description: Writes a marker file.
handler: tc_testing_fixtures:touch
requireApproval: true
inputSchema: {{type: object, properties: {{path: {{type: string}}}}, required: [path]}}
tests:
  - {{name: plain, input: {{path: "{marks["plain"]}"}}, status: awaiting_approval}}
  - {{name: declined, input: {{path: "{marks["declined"]}"}}, decline: true, status: declined}}
  - {{name: approved, input: {{path: "{marks["approved"]}"}}, approve: true}}
""")
    report = run_tests(load_registry(), TestOptions(tools=["gate"], fuzz=5, seed=1))
    assert outcomes(report) == {
        "gate::plain": "passed",
        "gate::declined": "passed",
        "gate::approved": "passed",
        "gate::fuzz valid inputs": "skipped",
        "gate::fuzz invalid inputs": "passed",
    }
    assert [p.name for p in marks.values() if p.exists()] == ["approved.txt"]


def test_cases_cover_both_branches_of_a_conditional_approval(project: Path) -> None:
    mark = project / "ran.txt"
    (project / "tools.d" / "cond.yaml").write_text(f"""\
toolctl: 1
name: cond
description: Writes a marker file; needs approval unless the caller holds the admin scope.
handler: tc_testing_fixtures:touch
requireApproval:
  when:
    properties:
      principal: {{not: {{type: object, properties: {{scopes: {{contains: {{const: admin}}}}}}}}}}
inputSchema: {{type: object, properties: {{path: {{type: string}}}}, required: [path]}}
tests:
  - {{name: operator waits, input: {{path: "{mark}"}}, status: awaiting_approval}}
  - name: admin runs
    input: {{path: "{mark}"}}
    principal: {{iss: "https://idp.example", sub: root, scopes: [admin]}}
  - name: reader waits
    input: {{path: "{mark}"}}
    principal: {{iss: "https://idp.example", sub: bob, scopes: [read]}}
    status: awaiting_approval
""")
    report = run_tests(load_registry(), TestOptions(tools=["cond"]))
    assert outcomes(report) == {
        "cond::operator waits": "passed",
        "cond::admin runs": "passed",
        "cond::reader waits": "passed",
    }
    assert mark.exists()  # only the admin's case ran the handler


def test_selection_by_tool_tag_and_keyword(project: Path) -> None:
    registry = load_registry()
    by_tool = run_tests(registry, TestOptions(tools=["divide"]))
    assert list(outcomes(by_tool)) == ["divide::six by three"]
    by_tag = run_tests(registry, TestOptions(tags=["math"], examples=False))
    assert {r.case.tool for r in by_tag.results} == {"add", "divide"}
    by_k = run_tests(registry, TestOptions(keyword="SUBSET"))
    assert list(outcomes(by_k)) == ["add::subset of the output"]
    fuzz_only = run_tests(registry, TestOptions(keyword="divide::fuzz valid", fuzz=3, seed=1))
    assert list(outcomes(fuzz_only)) == ["divide::fuzz valid inputs"]


def test_failing_expectations_are_explained(project: Path) -> None:
    (project / "tools.d" / "wrong.yaml").write_text("""\
toolctl: 1
name: add2
description: Add, with wrong expectations.
handler: tc_testing_fixtures:add
inputSchema: {type: object, properties: {a: {type: integer}, b: {type: integer}}}
tests:
  - {name: wrong sum, input: {a: 2, b: 2}, output: {sum: 5, terms: [2, 2]}}
  - {name: wrong error, input: {a: 2, b: 2}, error: {code: invalid_input}}
  - {name: crash, input: {a: 2}, outputContains: {sum: 2}}
""")
    report = run_tests(load_registry(), TestOptions(tools=["add2"]))
    assert not report.ok
    by_name = {r.case.name: r for r in report.results}
    (m,) = by_name["wrong sum"].mismatches
    assert m.details == ("at /sum: expected 5, got 4",)
    assert by_name["wrong error"].mismatches[0].message.startswith("expected an error")
    (m,) = by_name["crash"].mismatches
    assert m.field == "status" and "KeyError" in m.message
    assert str(by_name["crash"].case.location) == "tools.d/wrong.yaml:9:5"


def test_fuzz_finds_the_planted_bug_and_prints_a_minimal_case(project: Path) -> None:
    options = TestOptions(tools=["divide", "shout"], fuzz=40, seed=7, examples=False)
    report = run_tests(load_registry(), options)
    found = {r.id: r.finding for r in report.results if r.finding}
    assert set(found) == {"divide::fuzz valid inputs", "shout::fuzz valid inputs"}
    divide = found["divide::fuzz valid inputs"]
    assert divide is not None and divide.input == {"a": 0, "b": 0}
    assert "ZeroDivisionError" in divide.problem
    shout = found["shout::fuzz valid inputs"]
    assert shout is not None and shout.input == {"text": "!"}
    # the printed case is strict YAML and a valid test case; pasted in, it reproduces the bug
    (case,) = loads(divide.yaml_case()).data
    assert case == {
        "name": f"fuzz valid input {divide.index} (seed 7)",
        "input": {"a": 0, "b": 0},
        "status": "succeeded",
    }
    math = project / "tools.d" / "math.yaml"
    text = math.read_text().replace(
        "      - name: six by three",
        "\n".join("      " + line for line in divide.yaml_case().splitlines()[1:])
        + "\n      - name: six by three",
    )
    math.write_text(text)
    registry = load_registry()
    assert registry.ok, registry.diagnostics
    again = run_tests(registry, TestOptions(tools=["divide"], keyword="fuzz valid input"))
    assert outcomes(again) == {f"divide::{case['name']}": "failed"}


def test_fuzz_is_reproducible_by_seed(project: Path) -> None:
    registry = load_registry()
    runs = [run_tests(registry, TestOptions(tools=["divide"], fuzz=30, seed=5)) for _ in "ab"]
    first, second = ([r.finding.to_dict() for r in rep.results if r.finding] for rep in runs)
    assert first and first == second


def test_invalid_inputs_never_reach_the_handler(project: Path) -> None:
    registry = load_registry()

    async def go() -> Any:
        async with temporary_store(registry) as (isolated, store):
            runner = Runner(isolated, store, TestOptions())
            spec = isolated.get("record")
            case = TestCase(tool="record", name="x", location=Location("x"))

            async def call(value: Any) -> Any:
                return await runner.call(spec, TestCase(**{**case.__dict__, "input": value}))

            return await fuzz_tool(spec, call, runs=60, seed=3, kind=INVALID)

    before = len(sys.modules.get("tc_testing_fixtures", SimpleNamespace(CALLS=[])).CALLS)
    outcome = asyncio.run(go())
    assert outcome.runs == 60 and outcome.finding is None
    assert len(sys.modules["tc_testing_fixtures"].CALLS) == before


def test_fuzz_reports_invalid_input_that_was_not_rejected(project: Path) -> None:
    spec = load_registry().get("record")

    async def accept_everything(value: Any) -> Any:
        return SimpleNamespace(status="succeeded", error=None, output={"n": 1})

    outcome = asyncio.run(fuzz_tool(spec, accept_everything, runs=5, seed=1, kind=INVALID))
    assert outcome.finding is not None
    assert outcome.finding.problem == "invalid input was not rejected (status succeeded)"
    assert outcome.finding.test_case()["error"] == {"code": "invalid_input"}


def test_progress_is_reported_before_and_after_each_case(project: Path) -> None:
    events: list[tuple[str, str | None, int, int]] = []
    run_tests(
        load_registry(),
        TestOptions(tools=["divide"], fuzz=2, seed=1),
        lambda case_id, result, done, total: events.append(
            (case_id, result.outcome.value if result else None, done, total)
        ),
    )
    assert events[:2] == [
        ("divide::six by three", None, 0, 3),
        ("divide::six by three", "passed", 1, 3),
    ]
    assert events[-1][0] == "divide::fuzz invalid inputs" and events[-1][2:] == (3, 3)


def test_deliberate_handler_errors_are_answers_not_crashes(project: Path) -> None:
    registry = load_registry()
    report = run_tests(registry, TestOptions(tools=["lookup"], fuzz=10, seed=1, examples=False))
    valid = next(r for r in report.results if r.case.name == "fuzz valid inputs")
    assert valid.outcome.value == "passed"
    assert (
        valid.message
        == "10 valid input(s) handled correctly (10 NotFound: deliberate handler errors)"
    )
    allowed = TestOptions(tools=["divide"], fuzz=40, seed=7, allow_errors=("ZeroDivisionError",))
    assert run_tests(registry, allowed).ok


def test_examples_of_tools_that_cannot_run_are_validated_only(project: Path) -> None:
    options = TestOptions(tools=["export_only", "needs_context"], fuzz=3, seed=1)
    report = run_tests(load_registry(), options)
    got = {r.id: (r.outcome.value, r.message) for r in report.results}
    assert got["export_only::inputExamples[0]"] == (
        "passed",
        "input validated; not run: the tool has no handler",
    )
    assert got["needs_context::inputExamples[0]"] == (
        "passed",
        "input validated; not run: the tool needs a request context",
    )
    assert got["needs_context::with a tenant"][0] == "passed"
    assert got["needs_context::without a tenant"][0] == "passed"
    assert got["needs_context::fuzz valid inputs"] == (
        "skipped",
        "the tool needs a request context; fuzzing does not invent one",
    )
    assert got["needs_context::fuzz invalid inputs"][0] == "passed"
    assert got["export_only::fuzz valid inputs"][0] == "skipped"


def test_background_cases_wait_for_the_worker_or_see_it_running(project: Path) -> None:
    report = run_tests(load_registry(), TestOptions(tools=["crawl"]))
    assert outcomes(report) == {
        "crawl::finishes in the background": "passed",
        "crawl::still running when asked at once": "passed",
    }


def test_deliberate_errors_are_recognised_with_or_without_details() -> None:
    from toolctl.testing.fuzz import deliberate_error

    def failed(message: str, details: list[Any]) -> Any:
        err = SimpleNamespace(code="handler_error", message=message, details=details)
        return SimpleNamespace(status="failed", error=err)

    assert deliberate_error(failed("NotFound: x", [{"type": "NotFound"}])) == "NotFound"
    assert deliberate_error(failed("CalculationError: x", [])) == "CalculationError"  # subprocess
    assert deliberate_error(failed("KeyError: 'a'", [{"type": "KeyError"}])) is None
    assert deliberate_error(failed("KeyError: 'a'", []), ("KeyError",)) == "KeyError"
