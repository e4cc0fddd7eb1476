"""Test cases: the ``tests:`` entries of a tool, its implicit example checks, and selection."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolctl.schema import cached_validator

if TYPE_CHECKING:
    from toolctl.diagnostics import Location
    from toolctl.spec import ToolSpec

EXPECTATION_KEYS = (
    "status",
    "error",
    "output",
    "outputContains",
    "modelOutput",
    "display",
    "transcript",
)
"""The keys of a case that say what should happen, in the order they are checked."""

CASE = "case"
EXAMPLE = "example"
FUZZ = "fuzz"


@dataclass(frozen=True)
class TestCase:
    """One call to make and what to expect of it.

    ``expect`` holds only the expectation keys the author wrote (``output: null`` is an
    expectation, an absent ``output`` is not). ``kind`` is ``case`` (written in ``tests:``),
    ``example`` (an implicit check of an ``inputExamples`` entry) or ``fuzz``.
    """

    __test__ = False  # not a pytest class

    tool: str
    name: str
    location: Location
    kind: str = CASE
    input: Any = field(default_factory=dict)
    context: dict[str, Any] | None = None
    principal: dict[str, Any] | None = None  # {iss, sub, client_id?, scopes?}: who calls
    approve: bool = False
    decline: bool | str = False
    resume: dict[str, Any] | None = None
    answers: dict[str, Any] | None = None
    timeout: float | None = None
    expect: dict[str, Any] = field(default_factory=dict)
    skip: str | None = None

    @property
    def id(self) -> str:
        """``tool::name``: unique in a run, what ``-k`` matches and reports show."""
        return f"{self.tool}::{self.name}"

    @classmethod
    def from_declaration(cls, spec: ToolSpec, index: int) -> TestCase:
        """The ``index``-th entry of ``spec.tests`` (already checked by the format schema)."""
        raw = spec.tests[index]
        skip = raw.get("skip", False)
        return cls(
            tool=spec.name,
            name=raw["name"],
            location=spec.locate("tests", index),
            input=raw.get("input", {}),
            context=raw.get("context"),
            principal=raw.get("principal"),
            approve=raw.get("approve", False),
            decline=raw.get("decline", False),
            resume=raw.get("resume"),
            answers=raw.get("answers"),
            timeout=raw.get("timeout"),
            expect={k: raw[k] for k in EXPECTATION_KEYS if k in raw},
            skip=(skip if isinstance(skip, str) else "skip: true") if skip else None,
        )


def cannot_run(spec: ToolSpec) -> str | None:
    """Why a generated or example input cannot be run on ``spec`` as it is (None: it can)."""
    if spec.handler is None:
        return "the tool has no handler"
    context = spec.request_context_schema
    if context is not None and not cached_validator(context).is_valid({}):
        return "the tool needs a request context"
    return None


def example_cases(spec: ToolSpec) -> list[TestCase]:
    """One implicit case per ``inputExamples`` entry: it validates, runs and its output fits."""
    out = []
    for i, example in enumerate(spec.input_examples):
        label = example.get("description")
        name = f"inputExamples[{i}]" + (f" {label}" if label else "")
        out.append(
            TestCase(
                tool=spec.name,
                name=name,
                location=spec.locate("inputExamples", i),
                kind=EXAMPLE,
                input=example["input"],
            )
        )
    return out


def collect(
    specs: Iterable[ToolSpec], *, keyword: str | None = None, examples: bool = True
) -> list[TestCase]:
    """Every case of ``specs`` (declared first, then examples), filtered by ``keyword``.

    ``keyword`` is a case-insensitive substring of the case id ``tool::name``.
    """
    cases: list[TestCase] = []
    for spec in specs:
        cases.extend(TestCase.from_declaration(spec, i) for i in range(len(spec.tests)))
        if examples:
            cases.extend(example_cases(spec))
    return [c for c in cases if matches(c.id, keyword)]


def matches(case_id: str, keyword: str | None) -> bool:
    """True when ``keyword`` (case-insensitive) is in ``case_id``, or there is no keyword."""
    return not keyword or keyword.lower() in case_id.lower()


def fuzz_case(spec: ToolSpec, kind: str) -> TestCase:
    """The case that stands for fuzzing ``spec`` with ``kind`` (valid/invalid) inputs."""
    return TestCase(tool=spec.name, name=f"fuzz {kind} inputs", location=spec.location, kind=FUZZ)
