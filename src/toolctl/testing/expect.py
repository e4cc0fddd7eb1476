"""Checking a run result against a case's expectations.

Each expectation kind yields :class:`Mismatch` values that say what was expected, what happened,
where the two part (JSON pointers) and a unified diff, so a failure reads without a debugger.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from toolctl.spec.model import PHASES
from toolctl.testing.cases import EXAMPLE, TestCase
from toolctl.testing.jsonmatch import MISSING, differences, restrict, show, unified_diff

STATUSES_THAT_RAN_FINE = ("succeeded", "suspended", "awaiting_approval")
"""What an implicit example check accepts: the call went through the pipeline without failing."""


@dataclass(frozen=True)
class Mismatch:
    """One unmet expectation.

    ``field`` names it as written in the case (``status``, ``output``, ``display.output``, ...).
    ``details`` are ``at /pointer: ...`` sentences; ``diff`` is ``-expected``/``+actual`` lines.
    """

    field: str
    message: str
    expected: Any = None
    actual: Any = None
    details: tuple[str, ...] = ()
    diff: tuple[str, ...] = dataclasses.field(default=(), repr=False)

    def to_dict(self) -> dict[str, Any]:
        return {
            "field": self.field,
            "message": self.message,
            "expected": None if self.expected is MISSING else self.expected,
            "actual": None if self.actual is MISSING else self.actual,
            "details": list(self.details),
            "diff": list(self.diff),
        }


def status_of(result: Any) -> str:
    """The run status as its string value (``RunStatus`` is a ``str`` enum)."""
    status = result.status
    return str(getattr(status, "value", status))


def error_of(result: Any) -> dict[str, Any] | None:
    """``{"code", "message", "details"}`` of the result's error, or None."""
    err = result.error
    if err is None:
        return None
    return {
        "code": str(err.code),
        "message": str(err.message),
        "details": list(getattr(err, "details", []) or []),
    }


def describe_error(result: Any) -> str:
    """``code: message`` of the result's error ('' when there is none)."""
    err = error_of(result)
    return f"{err['code']}: {err['message']}" if err else ""


def compare(name: str, expected: Any, actual: Any, *, subset: bool = False) -> Mismatch | None:
    """A :class:`Mismatch` when ``actual`` does not match ``expected`` (exactly, or as a subset)."""
    found = differences(expected, actual, contains=subset)
    if not found:
        return None
    how = "does not contain the expected value" if subset else "differs from the expected value"
    shown = restrict(expected, actual) if subset else actual
    return Mismatch(
        name,
        f"{name} {how}",
        expected,
        actual,
        details=tuple(map(str, found)),
        diff=tuple(unified_diff(expected, shown)),
    )


def _check_status(case: TestCase, result: Any) -> Iterator[Mismatch]:
    if "status" in case.expect:
        wanted = case.expect["status"]
    elif "error" in case.expect:
        return  # the error's code says enough; any status that carries it will do
    else:
        wanted = "succeeded"
    actual = status_of(result)
    if actual != wanted:
        why = describe_error(result)
        message = f"expected status {wanted}, got {actual}" + (f" ({why})" if why else "")
        yield Mismatch("status", message, wanted, actual)


def _check_error(case: TestCase, result: Any) -> Iterator[Mismatch]:
    wanted = case.expect["error"]
    err = error_of(result)
    if err is None:
        yield Mismatch(
            "error",
            f"expected an error {show(wanted)}, but the call returned none "
            f"(status {status_of(result)})",
            wanted,
            None,
        )
        return
    if "code" in wanted and wanted["code"] != err["code"]:
        yield Mismatch(
            "error.code",
            f"expected error code {wanted['code']}, got {err['code']} ({err['message']})",
            wanted["code"],
            err["code"],
        )
    if "message" in wanted and wanted["message"] not in err["message"]:
        yield Mismatch(
            "error.message",
            f"expected the error message to contain {wanted['message']!r}, got {err['message']!r}",
            wanted["message"],
            err["message"],
        )


def _check_model_output(case: TestCase, result: Any) -> Iterator[Mismatch]:
    wanted = case.expect["modelOutput"]
    actual = result.model_output
    if isinstance(wanted, str) and isinstance(actual, dict) and actual.get("type") == "text":
        # shorthand: a plain string expects a text model output with exactly that text
        actual = actual.get("value")
    found = compare("modelOutput", wanted, actual)
    if found:
        yield found


def _check_phases(target: str) -> Callable[[TestCase, Any], Iterator[Mismatch]]:
    def check(case: TestCase, result: Any) -> Iterator[Mismatch]:
        payloads = getattr(result, target) or {}
        for phase, wanted in case.expect[target].items():
            if phase not in PHASES:
                yield Mismatch(
                    f"{target}.{phase}",
                    f"{target} has no phase {phase!r} (phases: {', '.join(PHASES)})",
                    wanted,
                    MISSING,
                )
                continue
            actual = payloads.get(phase, MISSING)
            if wanted is None and actual is MISSING:
                continue  # `phase: null` also accepts a suppressed (absent) phase
            found = compare(f"{target}.{phase}", wanted, actual)
            if found:
                yield found

    return check


def _check_value(key: str, subset: bool) -> Callable[[TestCase, Any], Iterator[Mismatch]]:
    def check(case: TestCase, result: Any) -> Iterator[Mismatch]:
        found = compare(key, case.expect[key], result.output, subset=subset)
        if found:
            yield found

    return check


_CHECKS: dict[str, Callable[[TestCase, Any], Iterator[Mismatch]]] = {
    "error": _check_error,
    "output": _check_value("output", subset=False),
    "outputContains": _check_value("outputContains", subset=True),
    "modelOutput": _check_model_output,
    "display": _check_phases("display"),
    "transcript": _check_phases("transcript"),
}


def check(case: TestCase, result: Any, output_validator: Any = None) -> list[Mismatch]:
    """Every unmet expectation of ``case`` in ``result`` (empty: the case passed).

    When the status is wrong, only the status and error are reported: a diff of an output that
    was never produced says nothing the status does not. ``output_validator`` (a
    :class:`toolctl.schema.Validator` of the tool's outputSchema) is used by example checks.
    """
    if case.kind == EXAMPLE:
        return _scrubbed(list(_check_example(result, output_validator)), result)
    found = list(_check_status(case, result))
    keys = ("error",) if found else tuple(_CHECKS)
    for key in keys:
        if key in case.expect:
            found.extend(_CHECKS[key](case, result))
    return _scrubbed(found, result)


def _scrubbed(found: list[Mismatch], result: Any) -> list[Mismatch]:
    """The mismatches as reported (terminal, JSON, JUnit): quoting no secret value the run saw
    (a mismatch shows the actual output, whose marked fields are secrets)."""
    if not found or not getattr(result, "secrets", None):
        return found
    scrub = result.scrub
    return [
        dataclasses.replace(
            m,
            message=scrub(m.message),
            actual=m.actual if m.actual is MISSING else scrub(m.actual),
            details=tuple(scrub(list(m.details))),
            diff=tuple(scrub(list(m.diff))),
        )
        for m in found
    ]


def _check_example(result: Any, output_validator: Any) -> Iterator[Mismatch]:
    status = status_of(result)
    if status not in STATUSES_THAT_RAN_FINE:
        why = describe_error(result)
        yield Mismatch(
            "status",
            f"the input example did not run: status {status}" + (f" ({why})" if why else ""),
            "succeeded",
            status,
        )
        return
    if status == "succeeded" and output_validator is not None:
        problems = output_validator.errors(result.output, limit=5)
        if problems:
            yield Mismatch(
                "outputSchema",
                "the output does not match outputSchema",
                None,
                result.output,
                details=tuple(f"at {p.pointer or '/'}: {p.message}" for p in problems),
            )
