"""``toolctl test --junit``: valid against Jenkins' junit-10.xsd whatever the cases hold."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import pytest

from tests.testing.junitcheck import junit_problems
from toolctl.diagnostics import Location
from toolctl.testing.cases import TestCase
from toolctl.testing.expect import Mismatch
from toolctl.testing.report import CaseResult, Outcome, TestReport, junit_xml

NASTY = "bell \x07, surrogate \ud800, \ufffe and <&> quotes \" '"


def _report() -> TestReport:
    def case(name: str, line: int) -> TestCase:
        return TestCase("add", name, Location("tools.d/add.yaml", line, 5))

    return TestReport(
        [
            CaseResult(case("ok", 10), Outcome.PASSED, 1.5),
            CaseResult(
                case(f"wrong {NASTY}", 12),
                Outcome.FAILED,
                2.0,
                mismatches=[Mismatch("output", f"output differs: {NASTY}", details=("at /x",))],
            ),
            CaseResult(case("broken", 14), Outcome.ERROR, message=f"handler raised {NASTY}"),
            CaseResult(case("later", 16), Outcome.SKIPPED, message="skip: not yet"),
        ],
        duration_ms=12.0,
    )


def test_report_with_every_outcome_is_valid_junit_10() -> None:
    assert junit_problems(junit_xml(_report())) == []


def test_locations_move_to_the_suite_and_the_failure_text() -> None:
    root = ET.fromstring(junit_xml(_report()).encode("utf-8"))
    assert "skipped" not in root.attrib
    [suite] = root.iter("testsuite")
    assert (suite.get("file"), suite.get("skipped")) == ("tools.d/add.yaml", "1")
    assert [(p.get("name"), p.get("value")) for p in suite.iter("property")] == [
        ("file", "tools.d/add.yaml")
    ]
    for case in root.iter("testcase"):
        assert "file" not in case.attrib and "line" not in case.attrib
    texts = {c.get("name"): "".join(c.itertext()).strip() for c in root.iter("testcase")}
    assert texts["broken"].startswith("tools.d/add.yaml:14\n")
    assert texts["later"] == "tools.d/add.yaml:16"


def test_characters_xml_cannot_carry_are_escaped_not_fatal() -> None:
    text = junit_xml(_report())
    text.encode("utf-8")  # a lone surrogate would make writing the file fail
    assert "\\x07" in text and "\\ud800" in text and "\\ufffe" in text


@pytest.mark.parametrize(
    ("bad", "why"),
    [
        ('<testsuites skipped="1"/>', "skipped"),
        (
            '<testsuites><testsuite name="a" tests="1" failures="0" errors="0">'
            '<testcase name="c" file="t.yaml" line="3"/></testsuite></testsuites>',
            "file",
        ),
    ],
)
def test_the_schema_rejects_what_toolctl_used_to_write(bad: str, why: str) -> None:
    problems = junit_problems(bad)
    assert problems and why in " ".join(problems)
