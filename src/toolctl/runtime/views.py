"""The display and transcript views of each phase (transformed, redacted), and which
of them the run history may keep."""

from __future__ import annotations

from typing import Any

from toolctl.errors import ToolctlError
from toolctl.runtime import transforms
from toolctl.runtime.callstate import CallState
from toolctl.runtime.redact import redact_text, redactor_for
from toolctl.runtime.result import RunResult, RunStatus


class CallViews(CallState):
    """Per-phase views of a run."""

    def phase(self, phase: str, payload: Any, schema: Any = None) -> None:
        """Record the display and transcript forms of ``payload`` (transformed, redacted)."""
        tspec = self.spec.transform
        specs = [tspec.get(t, {}).get(phase) if tspec else None for t in ("display", "transcript")]
        redactor = redactor_for(schema)
        if specs == [None, None]:
            # No transform: both targets show the same redacted payload; redact it once.
            shown = redactor.redact(payload)
            self._put(self.display, phase, shown)
            self._put(self.transcript, phase, shown)
            return
        for target, out, spec in (
            ("display", self.display, specs[0]),
            ("transcript", self.transcript, specs[1]),
        ):
            value = self._transform(spec, payload, phase, target)
            if value is transforms.SUPPRESSED:
                out.pop(phase, None)
            else:
                self._put(out, phase, redactor.redact(value))

    def _transform(self, spec: Any, payload: Any, phase: str, target: str) -> Any:
        info = {
            "phase": phase,
            "target": target,
            "toolName": self.spec.name,
            "runId": self.run_id,
            "toolCallId": self.run_id,
        }
        try:
            return transforms.apply(spec, payload, info, self.python_path)
        except (transforms.TransformError, ToolctlError) as exc:
            # Never fall back to the raw payload: show the failure instead.
            self.note(f"{target} transform for {phase} failed: {exc}")
            return {"transformError": redact_text(str(exc))}

    @staticmethod
    def _put(out: dict[str, Any], phase: str, value: Any) -> None:
        if phase == "inputDelta":
            out.setdefault(phase, []).append(value)
        else:
            out[phase] = value

    # What a caller collecting a result later (runs wait, a background run) needs besides the
    # transcript: the model output and the display views. Both are transformed for their
    # audience, but a view without its own transform is the raw payload (redacted): it is kept
    # only when the transcript does not transform that payload either, so the history never
    # holds what the transcript hides.

    def _declares(self, target: str, phase: str) -> bool:
        declared = self.spec.transform.get(target) or {}
        if phase == "approval" and "approval" not in declared:
            phase = "input"  # the approval view defaults to the input view
        return phase in declared

    def _storable(self, phase: str) -> bool:
        """The display view of ``phase`` may be stored (see above)."""
        return self._declares("display", phase) or not self._declares("transcript", phase)

    def _stored_display(self) -> dict[str, Any]:
        return {phase: value for phase, value in self.display.items() if self._storable(phase)}

    def _stored_model_output(self, result: RunResult) -> dict[str, Any] | None:
        model = result.model_output
        if model is None:
            return None
        if result.status is RunStatus.SUSPENDED:
            return model if self._storable("suspend") else None  # it shows the suspend view
        if result.status is not RunStatus.SUCCEEDED:
            return model  # error and pending messages: built from redacted text
        if transforms.shows_raw_output(self.spec.to_model_output) and self._declares(
            "transcript", "output"
        ):
            return None
        schema = self.spec.output_schema if isinstance(self.spec.output_schema, dict) else None
        return {**model, "value": redactor_for(schema).redact(model.get("value"))}
