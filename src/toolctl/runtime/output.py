"""Handler output: JSON and size checks, outputSchema, onOutput, toModelOutput."""

from __future__ import annotations

from typing import Any

from toolctl.errors import ToolctlError
from toolctl.runtime import history, jsondata, transforms
from toolctl.runtime.callstate import StepFailed, log, schema_problems
from toolctl.runtime.redact import redact_text
from toolctl.runtime.result import ErrorCode, RunResult, RunStatus, ToolErrorInfo
from toolctl.runtime.suspension import CallSuspension

MAX_OUTPUT_BYTES = 8 * 1024 * 1024


class CallOutput(CallSuspension):
    """Output handling of one run."""

    def _check_output(self, output: Any) -> None:
        # Strict dumps rejects NaN/Infinity, non-JSON types and over-long ints; encoding rejects
        # lone surrogates. One pass, and it gives the size.
        try:
            size = len(jsondata.dumps(output).encode("utf-8"))
        except (TypeError, ValueError, RecursionError) as exc:
            message = "nested too deeply" if isinstance(exc, RecursionError) else str(exc)
            raise StepFailed(
                ErrorCode.INVALID_OUTPUT.value, f"tool output is not valid JSON: {message}"
            ) from None
        if size > MAX_OUTPUT_BYTES:
            raise StepFailed(
                ErrorCode.INVALID_OUTPUT.value,
                f"output too large ({size} bytes > limit {MAX_OUTPUT_BYTES})",
            )

    async def _succeeded(self, output: Any) -> RunResult:
        spec = self.spec
        try:
            self._check_output(output)
            schema = spec.output_schema
            if schema is not None and spec.output_validation != "off":
                problems = schema_problems(schema, output)
                if problems and spec.output_validation == "strict":
                    raise StepFailed(
                        ErrorCode.INVALID_OUTPUT.value,
                        f"{spec.name} returned output that does not match its outputSchema",
                        problems,
                    )
                if problems:
                    self.note(
                        "output does not match outputSchema (outputValidation: "
                        "warn): " + "; ".join(f"{p['path']}: {p['message']}" for p in problems)
                    )
                    log.warning("%s: %s", spec.name, self.notes[-1])
        except StepFailed as exc:
            return self.error_result(exc.info, exc.status)
        await self.fire("onOutput", output=output)
        try:
            model = transforms.to_model_output(spec.to_model_output, output, self.python_path)
        except (transforms.TransformError, ToolctlError) as exc:
            return self.error_result(
                ToolErrorInfo(ErrorCode.HANDLER_ERROR.value, redact_text(str(exc)))
            )
        out_schema = spec.output_schema if isinstance(spec.output_schema, dict) else None
        self.phase("output", output, out_schema)
        result = self.result(RunStatus.SUCCEEDED, output=output, model_output=model)
        if self.sync:
            self.finish(result)
        else:
            await history.write(lambda: self.finish(result))
        return result
