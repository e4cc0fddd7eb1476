"""Each expectation kind, passing and failing, against run results."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from toolctl.diagnostics import Location
from toolctl.schema import make_validator
from toolctl.testing.cases import EXAMPLE, TestCase
from toolctl.testing.expect import check


def result(
    status: str = "succeeded",
    output: Any = None,
    error: Any = None,
    model_output: Any = None,
    display: Any = None,
    transcript: Any = None,
) -> Any:
    err = SimpleNamespace(code=error[0], message=error[1], details=[]) if error else None
    return SimpleNamespace(
        status=status,
        output=output,
        error=err,
        model_output=model_output,
        display=display or {},
        transcript=transcript or {},
    )


def case(**expect: Any) -> TestCase:
    return TestCase(tool="t", name="c", location=Location("t.yaml", 3, 5), expect=expect)


OK_RESULT = result(
    output={"temp": 21, "city": "Paris, France", "days": [1, 2, 3]},
    model_output={"type": "text", "value": "21 °C in Paris"},
    display={"output": {"temp": 21}, "input": {"city": "Paris"}},
    transcript={"output": "21 °C"},
)

PASSING = [
    {},
    {"status": "succeeded"},
    {"output": {"temp": 21, "city": "Paris, France", "days": [1, 2, 3]}},
    {"outputContains": {"city": "Paris", "days": [3]}},
    {"modelOutput": {"type": "text", "value": "21 °C in Paris"}},
    {"modelOutput": "21 °C in Paris"},
    {"display": {"output": {"temp": 21}}},
    {"display": {"error": None}},
    {"transcript": {"output": "21 °C"}},
]
FAILING = [
    ({"status": "failed"}, "status", "expected status failed, got succeeded"),
    ({"output": {"temp": 22}}, "output", "output differs from the expected value"),
    ({"outputContains": {"city": "Rome"}}, "outputContains", "does not contain"),
    ({"outputContains": {"days": [4]}}, "outputContains", "does not contain"),
    ({"modelOutput": "22 °C"}, "modelOutput", "differs"),
    ({"display": {"output": {"temp": 0}}}, "display.output", "differs"),
    ({"display": {"suspend": {"x": 1}}}, "display.suspend", "differs"),
    ({"transcript": {"output": "x"}}, "transcript.output", "differs"),
    ({"display": {"outptu": 1}}, "display.outptu", "display has no phase 'outptu' (phases: input,"),
    ({"error": {"code": "handler_error"}}, "error", "expected an error"),
]


@pytest.mark.parametrize("expect", PASSING)
def test_expectation_passes(expect: dict[str, Any]) -> None:
    assert check(case(**expect), OK_RESULT) == []


@pytest.mark.parametrize(("expect", "field", "text"), FAILING)
def test_expectation_fails(expect: dict[str, Any], field: str, text: str) -> None:
    found = check(case(**expect), OK_RESULT)
    assert [m.field for m in found] == [field]
    assert text in found[0].message


def test_output_failure_carries_path_and_diff() -> None:
    (m,) = check(case(output={"temp": 22, "city": "Paris, France", "days": [1, 2, 3]}), OK_RESULT)
    assert m.details == ("at /temp: expected 22, got 21",)
    assert '-  "temp": 22' in m.diff and '+  "temp": 21' in m.diff


FAILED = result("failed", error=("handler_error", "weather failed: KeyError: 'Atlantis'"))


def test_error_code_and_message_substring() -> None:
    assert check(case(error={"code": "handler_error", "message": "Atlantis"}), FAILED) == []
    assert check(case(status="failed", error={"code": "handler_error"}), FAILED) == []
    found = check(case(error={"code": "invalid_input", "message": "Paris"}), FAILED)
    assert [m.field for m in found] == ["error.code", "error.message"]


def test_wrong_status_reports_the_error_not_an_output_diff() -> None:
    found = check(case(output={"temp": 21}), FAILED)
    assert [m.field for m in found] == ["status"]
    assert "handler_error: weather failed: KeyError" in found[0].message


def test_example_case_checks_output_schema() -> None:
    example = TestCase(tool="t", name="inputExamples[0]", location=Location("t.yaml"), kind=EXAMPLE)
    schema = make_validator(
        {"type": "object", "required": ["temp"], "properties": {"temp": {"type": "integer"}}}
    )
    assert check(example, OK_RESULT, schema) == []
    (m,) = check(example, result(output={"temp": "hot"}), schema)
    assert m.field == "outputSchema" and "at /temp" in m.details[0]
    assert check(example, result("suspended"), schema) == []
    (m,) = check(example, FAILED, schema)
    assert m.field == "status"
