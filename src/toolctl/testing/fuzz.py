"""Schema-driven fuzzing of one tool through the call pipeline.

Valid inputs (drawn from ``inputSchema``) must never crash the handler nor produce output that
fails ``outputSchema``; invalid inputs (a valid one broken in one place) must come back as a
structured validation error without reaching the handler. Runs are seeded per tool, so
``--seed S`` reproduces them whatever else is selected. The first failure of each kind is shrunk
to a minimal input and rendered as a test case ready to paste under the tool's ``tests:``.
"""

from __future__ import annotations

import builtins
import random
import re
from collections import Counter
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolctl.runtime.pipeline.plan import plan_for
from toolctl.schema import cached_validator
from toolctl.testing.cases import cannot_run
from toolctl.testing.expect import STATUSES_THAT_RAN_FINE, error_of, status_of
from toolctl.testing.gen import Unsatisfiable, ValueGenerator
from toolctl.testing.mutate import invalid
from toolctl.testing.shrink import DEFAULT_BUDGET, shrink

if TYPE_CHECKING:
    from toolctl.spec import ToolSpec

Call = Callable[[Any], Awaitable[Any]]
VALID, INVALID = "valid", "invalid"
TIMEOUT_SHRINK_BUDGET = 8
REJECTION_CODES = ("invalid_input", "invalid_arguments")


@dataclass
class FuzzFinding:
    """A generated input the tool mishandled, shrunk to a minimal one."""

    tool: str
    kind: str
    problem: str
    input: Any
    original: Any
    index: int
    seed: int
    shrink_calls: int = 0
    mutation: str | None = None

    def test_case(self) -> dict[str, Any]:
        """The regression case: what *should* happen for this input."""
        name = f"fuzz {self.kind} input {self.index} (seed {self.seed})"
        case: dict[str, Any] = {"name": name, "input": self.input}
        if self.kind == VALID:
            case["status"] = "succeeded"
        else:
            case["status"] = "failed"
            case["error"] = {"code": "invalid_input"}
        return case

    def yaml_case(self) -> str:
        """:meth:`test_case` as a YAML list item, to paste under the tool's ``tests:``."""
        from toolctl.yamlsrc import dumps

        text = dumps(
            [self.test_case()],
            sort_keys=False,
            allow_unicode=True,
            default_flow_style=False,
            width=100,
        )
        comment = " ".join(self.problem.split())  # one line, whatever the message holds
        return f"# {self.tool}: {comment}\n{text}"

    def to_dict(self) -> dict[str, Any]:
        return {
            "tool": self.tool,
            "kind": self.kind,
            "problem": self.problem,
            "input": self.input,
            "original_input": self.original,
            "index": self.index,
            "seed": self.seed,
            "shrink_calls": self.shrink_calls,
            "mutation": self.mutation,
            "test_case": self.test_case(),
            "yaml": self.yaml_case(),
        }


@dataclass
class FuzzOutcome:
    """What fuzzing one kind of input on one tool found."""

    tool: str
    kind: str
    runs: int = 0
    finding: FuzzFinding | None = None
    skipped: str | None = None
    answered: Counter[str] = field(default_factory=Counter)
    """Deliberate handler errors met on valid inputs, by exception type."""


_RAISED = re.compile(r"(?:^|failed: )([A-Za-z_][A-Za-z0-9_]*): ")


def _builtin_exception(name: str) -> bool:
    found = getattr(builtins, name, None)
    return isinstance(found, type) and issubclass(found, BaseException)


def deliberate_error(result: Any, allow_errors: tuple[str, ...] = ()) -> str | None:
    """The exception type when the handler failed *on purpose*, else None.

    A handler's own exception class (``CustomerNotFound``) is an answer; a built-in one
    (``KeyError``, ``TypeError``, ``ZeroDivisionError``, ...) is a crash unless it is listed in
    ``allow_errors``.
    """
    err = error_of(result)
    if err is None or err["code"] != "handler_error":
        return None
    names = [d.get("type") for d in err["details"] if isinstance(d, dict)]
    if not names:  # subprocess isolation reports the type only in the message
        match = _RAISED.search(err["message"])
        names = [match.group(1)] if match else []
    for name in names:
        if isinstance(name, str) and (name in allow_errors or not _builtin_exception(name)):
            return name
    return None


def valid_problem(
    result: Any, output_validator: Any, allow_errors: tuple[str, ...] = ()
) -> tuple[str, str] | None:
    """(signature, message) when a valid input was mishandled, else None.

    A deliberate handler error (see :func:`deliberate_error`) is an answer, not a crash.
    """
    status = status_of(result)
    if status == "succeeded":
        if output_validator is not None:
            problems = output_validator.errors(result.output, limit=1)
            if problems:
                where = problems[0].pointer or "/"
                return "invalid_output", (
                    f"output does not match outputSchema at {where}: {problems[0].message}"
                )
        return None
    if status in STATUSES_THAT_RAN_FINE or deliberate_error(result, allow_errors):
        return None
    err = error_of(result)
    code = err["code"] if err else status
    text = f"{code}: {err['message']}" if err else f"status {status}"
    where = [d for d in (err["details"] if err else []) if "path" in d and "message" in d]
    if where:
        text += f" (at {where[0]['path']}: {where[0]['message']})"
    return f"{status}/{code}", f"valid input mishandled: {text}"


def invalid_problem(result: Any) -> tuple[str, str] | None:
    """(signature, message) when an invalid input was not rejected properly, else None."""
    status = status_of(result)
    err = error_of(result)
    if err and err["code"] in REJECTION_CODES:
        if not err["details"]:
            return "no-details", "invalid input rejected without details naming the field"
        return None
    got = f"{err['code']}: {err['message']}" if err else f"status {status}"
    return f"{status}/{err['code'] if err else ''}", f"invalid input was not rejected ({got})"


def skip_reason(spec: ToolSpec, kind: str) -> str | None:
    """Why ``kind`` inputs are not fuzzed on this tool (None: they are)."""
    if spec.handler is None:
        return "the tool has no handler"
    if kind == INVALID:
        return None  # invalid inputs never get past validation, whatever the tool does
    if spec.require_approval:
        return "the tool requires approval; valid inputs would never run"
    if spec.annotations.get("destructiveHint") is True:
        return "the tool is marked destructive; only invalid inputs are fuzzed"
    why = cannot_run(spec)
    return f"{why}; fuzzing does not invent one" if why else None


async def fuzz_tool(
    spec: ToolSpec,
    call: Call,
    *,
    runs: int,
    seed: int,
    kind: str,
    allow_errors: tuple[str, ...] = (),
) -> FuzzOutcome:
    """Fuzz ``spec`` with ``runs`` inputs of ``kind`` (valid or invalid) through ``call``."""
    outcome = FuzzOutcome(spec.name, kind, skipped=skip_reason(spec, kind))
    if outcome.skipped:
        return outcome
    rng = random.Random(f"{seed}:{spec.name}:{kind}")
    gen = ValueGenerator(spec.input_schema, rng, defaults=plan_for(spec).fills_defaults)
    out_validator = None  # background results hold the transcript form: see runner.run_case
    if spec.output_schema is not None and not spec.background:
        out_validator = cached_validator(spec.output_schema)
    for index in range(1, runs + 1):
        try:
            value = gen.valid()
            mutation = None
            if kind == INVALID:
                value, mut = invalid(gen, value)
                mutation = str(mut)
        except Unsatisfiable as exc:
            outcome.skipped = f"no {kind} input could be generated: {exc}"
            return outcome
        outcome.runs += 1

        def judge(res: Any) -> tuple[str, str] | None:
            if kind == VALID:
                return valid_problem(res, out_validator, allow_errors)
            return invalid_problem(res)

        result = await call(value)
        found = judge(result)
        if found is None:
            answered = deliberate_error(result, allow_errors) if kind == VALID else None
            if answered:
                outcome.answered[answered] += 1
            continue
        signature, problem = found

        async def still_fails(candidate: Any, signature: str = signature) -> bool:
            again = judge(await call(candidate))
            return again is not None and again[0] == signature

        def admissible(candidate: Any) -> bool:
            return gen.accepts(candidate) == (kind == VALID)

        # every attempt to shrink a timeout costs a whole timeout: try only a few
        budget = TIMEOUT_SHRINK_BUDGET if "timed_out" in signature else DEFAULT_BUDGET
        small, calls = await shrink(value, still_fails, admissible, budget)
        final = judge(await call(small))
        outcome.finding = FuzzFinding(
            spec.name,
            kind,
            final[1] if final else problem,
            small,
            value,
            index,
            seed,
            calls,
            mutation,
        )
        return outcome
    return outcome
