"""Examples and tests: a tool nobody has exercised, and tests that cannot tell anything.

Input examples and test inputs that do not match ``inputSchema`` are already errors of
``toolctl validate`` (TC304, TC306), which lint reports too.
"""

from __future__ import annotations

from collections.abc import Iterator

from toolctl.diagnostics import Severity
from toolctl.lint.context import LintContext
from toolctl.lint.model import Hit, RuleSet
from toolctl.spec import ToolSpec

RULES = RuleSet("examples")
_ASSERTIONS = (
    "output",
    "outputContains",
    "modelOutput",
    "display",
    "transcript",
    "status",
    "error",
)


@RULES.tool("TL501", "untested", Severity.INFO, "tool without tests or input examples")
def untested(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """The tool has neither ``tests`` nor ``inputExamples``.

    Examples show the model (and reviewers) what a good call looks like; tests prove the handler
    does what the description says. Add at least one of either.
    """
    if not tool.tests and not tool.input_examples and tool.enabled:
        yield Hit(
            tool,
            ("name",),
            "tool has no tests and no inputExamples",
            hint="add a tests: case (run by `toolctl test`) or an inputExamples entry",
        )


@RULES.tool("TL502", "test-without-assertion", Severity.WARNING, "test case that asserts nothing")
def test_without_assertion(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A ``tests`` case has no expectation (output, outputContains, modelOutput, status, ...).

    Such a case passes whenever the handler returns anything, so it only proves the handler does
    not crash. Say what it should return.
    """
    for i, case in enumerate(tool.tests):
        if not case.get("skip") and not any(k in case for k in _ASSERTIONS):
            yield Hit(
                tool,
                ("tests", i),
                f"test {case.get('name', i)!r} asserts nothing",
                hint="add output, outputContains, modelOutput or status",
            )


@RULES.tool(
    "TL503",
    "test-output-invalid",
    Severity.ERROR,
    "test expects an output that outputSchema forbids",
)
def test_output_invalid(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A test's expected ``output`` does not validate against ``outputSchema``.

    With ``outputValidation: strict`` (the default) a handler returning that output fails, so the
    test can never pass as written. Fix the expectation or the schema.
    """
    if tool.output_schema is None or tool.output_validation != "strict":
        return
    from toolctl.schema import cached_validator

    for i, case in enumerate(tool.tests):
        if "output" not in case:
            continue
        problems = cached_validator(tool.output_schema).errors(case["output"], limit=1)
        if problems:
            yield Hit(
                tool,
                ("tests", i, "output", *problems[0].path),
                f"expected output does not match outputSchema: {problems[0].message}",
                hint="fix the expected output or the outputSchema",
            )
