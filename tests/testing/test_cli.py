"""``toolctl test`` from the command line: text report, JSON, JUnit XML and exit codes."""

from __future__ import annotations

import json
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from tests.testing.junitcheck import junit_problems
from toolctl.cli.app import run

pytestmark = pytest.mark.timeout(60)

FAILING = """\
toolctl: 1
name: add2
description: Add, with one wrong expectation.
handler: tc_testing_fixtures:add
inputSchema:
  type: object
  properties: {a: {type: integer}, b: {type: integer}}
  required: [a, b]
tests:
  - {name: right, input: {a: 1, b: 1}, outputContains: {sum: 2}}
  - {name: wrong sum, input: {a: 2, b: 2}, output: {sum: 5, terms: [2, 2]}}
  - {name: later, input: {a: 0, b: 0}, skip: true}
"""


def test_passing_project_exits_0(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["test"]) == 0
    out = capsys.readouterr().out
    assert "0 failed, 0 error(s), 1 skipped" in out
    assert "add " in out and "touch " in out  # the per-tool table


def test_failure_shows_location_and_diff(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "tools.d" / "wrong.yaml").write_text(FAILING)
    assert run(["test", "--tool", "add2"]) == 1
    out = capsys.readouterr().out
    assert "FAIL add2::wrong sum (tools.d/wrong.yaml:11:5)" in out
    assert "at /sum: expected 5, got 4" in out
    assert '-  "sum": 5,' in out and '+  "sum": 4,' in out
    assert "1 passed, 1 failed, 0 error(s), 1 skipped" in out


def test_json_format(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "tools.d" / "wrong.yaml").write_text(FAILING)
    assert run(["test", "-t", "add2", "--format", "json"]) == 1
    doc = json.loads(capsys.readouterr().out)
    assert doc["status"] == "fail"
    assert doc["counts"] == {"total": 3, "passed": 1, "failed": 1, "error": 0, "skipped": 1}
    wrong = next(r for r in doc["results"] if r["name"] == "wrong sum")
    assert wrong["mismatches"][0]["details"] == ["at /sum: expected 5, got 4"]
    assert wrong["run"]["output"] == {"sum": 4, "terms": [2, 2]}


def test_junit_xml_parses_with_the_right_counts(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "tools.d" / "wrong.yaml").write_text(FAILING)
    target = project / "report.xml"
    assert (
        run(
            [
                "test",
                "--junit",
                str(target),
                "--fuzz",
                "10",
                "--seed",
                "3",
                "-t",
                "add2",
                "-t",
                "divide",
            ]
        )
        == 1
    )
    assert junit_problems(target) == []
    root = ET.parse(target).getroot()
    assert root.tag == "testsuites"
    assert (root.get("tests"), root.get("failures"), root.get("errors")) == ("8", "2", "0")
    suites = {s.get("name"): s for s in root.iter("testsuite")}
    assert set(suites) == {"add2", "divide"}
    assert suites["add2"].get("failures") == "1" and suites["divide"].get("failures") == "1"
    assert (
        suites["add2"].get("skipped") == "1" and suites["add2"].get("file") == "tools.d/wrong.yaml"
    )
    cases = list(root.iter("testcase"))
    assert len(cases) == 8
    failures = [c for c in cases if c.find("failure") is not None]
    assert {c.get("name") for c in failures} == {"wrong sum", "fuzz valid inputs"}
    texts = "".join(c.findtext("failure") or "" for c in failures)
    assert "at /sum: expected 5, got 4" in texts and "ZeroDivisionError" in texts
    assert "minimal failing case:" in texts and "input:" in texts
    wrong = next(c for c in failures if c.get("name") == "wrong sum")
    assert (wrong.findtext("failure") or "").startswith("tools.d/wrong.yaml:11\n")


def test_fuzz_output_prints_a_paste_ready_case(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["test", "-t", "divide", "--fuzz", "20", "--seed", "1"]) == 1
    out = capsys.readouterr().out
    assert "FAIL divide::fuzz valid inputs" in out
    assert "paste under `tests:` in tools.d/math.yaml:" in out
    assert "      input:\n        a: 0\n        b: 0\n      status: succeeded" in out
    assert "(seed 1)" in out


def test_registry_errors_stop_the_run(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (project / "tools.d" / "broken.yaml").write_text("toolctl: 1\nname: x\n")
    assert run(["test"]) == 1
    err = capsys.readouterr().err
    assert "tools.d/broken.yaml:1:1: error TC201" in err
    assert "the registry has errors; no case ran\n  hint: fix them first (toolctl validate)" in err


def test_unknown_tool_is_a_clear_error(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(["test", "--tool", "dvide"]) == 2
    assert "did you mean divide" in capsys.readouterr().err


def test_settings_from_toolctl_yaml(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = project / "toolctl.yaml"
    config.write_text(config.read_text() + "test: {allowErrors: [ZeroDivisionError]}\n")
    assert run(["test", "-t", "divide", "--fuzz", "20", "--seed", "1"]) == 0
    config.write_text(config.read_text().replace("allowErrors: [ZeroDivisionError]", "timeout: -1"))
    capsys.readouterr()
    assert run(["test"]) == 1
    assert "test.timeout must be a number of seconds above 0" in capsys.readouterr().err


def test_unwritable_junit_path_is_a_clear_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["test", "-t", "divide", "--junit", str(project / "no" / "such" / "r.xml")]) == 2
    out, err = capsys.readouterr()
    assert "cannot write the JUnit report" in err and "No such file or directory" in err
    assert "divide" in out  # the results are printed all the same
