"""Handler output: JSON and size checks, outputSchema, toModelOutput."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolctl.errors import InvalidJSONError, ToolctlError
from toolctl.runtime import jsondata
from toolctl.runtime.exctext import describe, message_of
from toolctl.runtime.execution.invoke import Saturated, off_loop
from toolctl.runtime.pipeline import transforms, validation
from toolctl.runtime.pipeline.state import StepFailed, log
from toolctl.runtime.result import ErrorCode

if TYPE_CHECKING:
    from toolctl.runtime.pipeline.state import RunState

MAX_OUTPUT_BYTES = 8 * 1024 * 1024


async def check_output(state: RunState, output: Any) -> None:
    """Step 8: the output is plain, bounded JSON and matches ``outputSchema`` (strict mode), or
    a note says how it does not (warn mode). :class:`StepFailed` otherwise (also when the
    validation of the output is refused: the call's validation budget is spent)."""
    spec = state.spec
    try:
        # The walk rejects what ``json.dumps`` would quietly change (non-string keys such as
        # ``{1: 2}``, lone surrogates); dumping gives the size.
        jsondata.check(output, what="tool output")
        text = jsondata.dumps(output)
        size = len(text) if text.isascii() else len(text.encode("utf-8"))
    except InvalidJSONError as exc:
        detail = exc.message.removeprefix("invalid JSON in tool output: ")
        raise StepFailed(
            ErrorCode.INVALID_OUTPUT.value, f"tool output is not valid JSON: {detail}"
        ) from None
    except (TypeError, ValueError, RecursionError) as exc:
        message = "nested too deeply" if isinstance(exc, RecursionError) else message_of(exc)
        raise StepFailed(
            ErrorCode.INVALID_OUTPUT.value, f"tool output is not valid JSON: {message}"
        ) from None
    except Exception as exc:  # a mapping or list subclass whose own methods raise
        raise StepFailed(
            ErrorCode.INVALID_OUTPUT.value,
            f"tool output could not be read ({describe(exc)}): return plain dicts and lists",
        ) from None
    if size > MAX_OUTPUT_BYTES:
        raise StepFailed(
            ErrorCode.INVALID_OUTPUT.value,
            f"output too large ({size} bytes > limit {MAX_OUTPUT_BYTES})",
        )
    schema = spec.output_schema
    if schema is None or spec.output_validation == "off":
        return
    validator = state.plan.output_validator
    if validator is not None and validator.loop_accept(output):
        return  # (no coroutine for the common case: see validation.problems)
    problems = await validation.problems(
        state,
        schema,
        output,
        validator,
        code=ErrorCode.INVALID_OUTPUT.value,
        what="output",
    )
    if problems and spec.output_validation == "strict":
        raise StepFailed(
            ErrorCode.INVALID_OUTPUT.value,
            f"{spec.name} returned output that does not match its outputSchema",
            problems,
        )
    if problems:
        state.note(
            "output does not match outputSchema (outputValidation: warn): "
            + "; ".join(f"{p['path']}: {p['message']}" for p in problems)
        )
        log.warning("%s: %s", spec.name, state.notes[-1])


def model_output_in_place(
    state: RunState, output: Any, python_path: tuple[str, ...]
) -> dict[str, Any]:
    """Step 9 without user code (no ``toModelOutput``, or a declarative one): what the model
    sees; :class:`StepFailed` when it fails."""
    try:
        return transforms.to_model_output(state.spec.to_model_output, output, python_path)
    except (transforms.TransformError, ToolctlError) as exc:
        raise StepFailed(ErrorCode.HANDLER_ERROR.value, state.scrub(str(exc))) from None


async def model_output(
    state: RunState, output: Any, python_path: tuple[str, ...]
) -> dict[str, Any]:
    """Step 9: what the model sees (``toModelOutput``); :class:`StepFailed` when it fails. A
    callable ``toModelOutput`` is user code: it runs off the event loop."""
    spec = state.spec.to_model_output
    if not (spec and "call" in spec):
        return model_output_in_place(state, output, python_path)
    try:
        return await off_loop(
            transforms.to_model_output, spec, output, python_path, name="toolctl-transform"
        )
    except (transforms.TransformError, ToolctlError) as exc:
        raise StepFailed(ErrorCode.HANDLER_ERROR.value, state.scrub(str(exc))) from None
    except Saturated as exc:
        raise StepFailed(ErrorCode.HANDLER_ERROR.value, f"executor saturated: {exc}") from None
