"""Results of a test run: per-case outcomes, counts, the JSON document and JUnit XML."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolctl.testing.cases import TestCase
    from toolctl.testing.expect import Mismatch
    from toolctl.testing.fuzz import FuzzFinding


class Outcome(str, enum.Enum):
    """How one case ended: it ``passed``, ``failed`` an expectation, could not run (``error``)
    or was ``skipped``."""

    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"

    def __str__(self) -> str:
        return self.value


@dataclass
class CaseResult:
    """One case's outcome, with everything needed to explain a failure."""

    case: TestCase
    outcome: Outcome
    duration_ms: float = 0.0
    mismatches: list[Mismatch] = field(default_factory=list)
    message: str | None = None
    run: dict[str, Any] | None = None
    finding: FuzzFinding | None = None

    @property
    def id(self) -> str:
        return self.case.id

    def summary(self) -> str:
        """One line: why it failed, errored or was skipped ('' when it passed)."""
        if self.message:
            return self.message
        if self.mismatches:
            return self.mismatches[0].message
        return ""

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "tool": self.case.tool,
            "name": self.case.name,
            "kind": self.case.kind,
            "location": str(self.case.location),
            "outcome": self.outcome.value,
            "duration_ms": round(self.duration_ms, 3),
            "message": self.summary() or None,
            "mismatches": [m.to_dict() for m in self.mismatches],
            "run": self.run,
            "fuzz_finding": self.finding.to_dict() if self.finding else None,
        }


@dataclass
class TestReport:
    """Every case result of one ``toolctl test`` run, in run order."""

    __test__ = False  # not a pytest class

    results: list[CaseResult] = field(default_factory=list)
    seed: int | None = None
    duration_ms: float = 0.0

    def counts(self) -> dict[str, int]:
        """``{"total", "passed", "failed", "error", "skipped"}``."""
        out = {o.value: 0 for o in Outcome}
        for r in self.results:
            out[r.outcome.value] += 1
        return {"total": len(self.results), **out}

    @property
    def ok(self) -> bool:
        """True when nothing failed or errored (skips are fine)."""
        return not any(r.outcome in (Outcome.FAILED, Outcome.ERROR) for r in self.results)

    def to_dict(self) -> dict[str, Any]:
        """The ``--format json`` document."""
        return {
            "status": "pass" if self.ok else "fail",
            "counts": self.counts(),
            "seed": self.seed,
            "duration_ms": round(self.duration_ms, 3),
            "results": [r.to_dict() for r in self.results],
        }


_XML_BAD = {c: f"\\x{c:02x}" for c in (*range(0x00, 0x09), 0x0B, 0x0C, *range(0x0E, 0x20))}
_XML_BAD.update({c: f"\\u{c:04x}" for c in (*range(0xD800, 0xE000), 0xFFFE, 0xFFFF)})


def _xml(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot carry: control characters, lone
    surrogates (which could not even be written as UTF-8), U+FFFE/U+FFFF (shown escaped)."""
    return text.translate(_XML_BAD)


def _where(result: CaseResult) -> str:
    loc = result.case.location
    return f"{loc.file}:{loc.line}" if loc.line > 0 else loc.file


def _failure_text(result: CaseResult) -> str:
    lines: list[str] = []
    for m in result.mismatches:
        lines.append(m.message)
        lines.extend(f"  {d}" for d in m.details)
        lines.extend(f"  {d}" for d in m.diff)
    if result.finding is not None:
        lines.append("minimal failing case:")
        lines.append(result.finding.yaml_case())
    return "\n".join(lines) or (result.message or "")


def junit_xml(report: TestReport) -> str:
    """The report as JUnit XML: one ``<testsuite>`` per tool, one ``<testcase>`` per case.

    Valid against the Jenkins ``junit-10.xsd`` that CI servers read: the tool's file is the
    suite's ``file`` attribute and a property, and a case's ``file:line`` starts the text of its
    failure, error or skip (``<testcase>`` takes neither attribute, ``<testsuites>`` no
    ``skipped``).
    """
    import xml.etree.ElementTree as ET

    by_tool: dict[str, list[CaseResult]] = {}
    for r in report.results:
        by_tool.setdefault(r.case.tool, []).append(r)
    counts = report.counts()
    root = ET.Element(
        "testsuites",
        name="toolctl",
        tests=str(counts["total"]),
        failures=str(counts["failed"]),
        errors=str(counts["error"]),
        time=f"{report.duration_ms / 1000:.3f}",
    )
    for tool, results in by_tool.items():
        _suite(root, tool, results)
    ET.indent(root)
    body: str = ET.tostring(root, encoding="unicode")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + body + "\n"


def _suite(root: Any, tool: str, results: list[CaseResult]) -> None:
    import xml.etree.ElementTree as ET

    file = _xml(results[0].case.location.file)
    suite = ET.SubElement(
        root,
        "testsuite",
        name=_xml(tool),
        tests=str(len(results)),
        failures=str(sum(r.outcome is Outcome.FAILED for r in results)),
        errors=str(sum(r.outcome is Outcome.ERROR for r in results)),
        skipped=str(sum(r.outcome is Outcome.SKIPPED for r in results)),
        time=f"{sum(r.duration_ms for r in results) / 1000:.3f}",
        file=file,
    )
    properties = ET.SubElement(suite, "properties")
    ET.SubElement(properties, "property", name="file", value=file)
    for r in results:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=_xml(tool),
            name=_xml(r.case.name),
            time=f"{r.duration_ms / 1000:.3f}",
        )
        where = _xml(_where(r))
        if r.outcome is Outcome.FAILED:
            ET.SubElement(
                case, "failure", message=_xml(r.summary()), type="AssertionError"
            ).text = f"{where}\n{_xml(_failure_text(r))}"
        elif r.outcome is Outcome.ERROR:
            ET.SubElement(
                case, "error", message=_xml(r.summary()), type="Error"
            ).text = f"{where}\n{_xml(r.summary())}"
        elif r.outcome is Outcome.SKIPPED:
            ET.SubElement(case, "skipped", message=_xml(r.summary())).text = where
