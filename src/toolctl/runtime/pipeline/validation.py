"""Schema checks of one call: charged to the call's validation budget, off the event loop.

A value the fast path accepts (a plain schema checked by jsonschema-rs, linear in the value)
is accepted in place. Anything else, which may evaluate patterns, formats and applicators at
length, runs on a handler worker thread (:func:`~toolctl.runtime.execution.invoke.off_loop`), so a
hostile value never holds the server's event loop, and is charged to the call's
:class:`~toolctl.budget.ValidationBudget` (``run.validationBudgetMs``): past it the call is
refused with the step's error code, never accepted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolctl.budget import ValidationRefused
from toolctl.runtime.execution.invoke import Saturated, off_loop
from toolctl.runtime.pipeline.plan import validator_for
from toolctl.runtime.pipeline.state import StepFailed, schema_problems
from toolctl.runtime.result import ErrorCode

if TYPE_CHECKING:
    from toolctl.runtime.pipeline.state import RunState
    from toolctl.schema import Validator


async def problems(
    state: RunState,
    schema: Any,
    value: Any,
    validator: Validator | None = None,
    *,
    code: str,
    what: str,
) -> list[dict[str, Any]]:
    """The redacted problems of ``value`` (``what``: "input", "output", ...); a refusal or a
    saturated worker pool is :class:`StepFailed` with ``code``."""
    validator = validator or validator_for(schema)
    if validator.loop_accept(value):
        return []
    try:
        return await off_loop(
            schema_problems, schema, value, validator, state.budget, name="toolctl-validate"
        )
    except ValidationRefused as exc:
        raise StepFailed(code, f"{state.spec.name}: {what} refused: {exc}") from None
    except Saturated as exc:
        raise StepFailed(ErrorCode.HANDLER_ERROR.value, f"executor saturated: {exc}") from None
