"""The display and transcript views of each phase of a run (transformed, redacted), and which
of them the run history may keep."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolctl.errors import ToolctlError
from toolctl.runtime.execution.invoke import Saturated, off_loop
from toolctl.runtime.pipeline import transforms
from toolctl.runtime.pipeline.state import StepFailed
from toolctl.runtime.redact import scrub_values
from toolctl.runtime.result import ErrorCode, RunResult, RunStatus

if TYPE_CHECKING:
    from toolctl.runtime.pipeline.state import RunState


class Views:
    """Per-phase views of one run, kept in its :class:`RunState` (``display``/``transcript``)."""

    __slots__ = ("output_view", "plan", "python_path", "state")

    def __init__(self, state: RunState, python_path: tuple[str, ...]) -> None:
        self.state = state
        self.plan = state.plan
        self.python_path = python_path
        # (the output, its view) when the view is the output redacted by the output schema's
        # redactor, untransformed: the stored model output of that same output reuses it
        self.output_view: tuple[Any, Any] | None = None

    def phase(self, phase: str, payload: Any, schema: Any = None) -> None:
        """Record the display and transcript forms of ``payload`` (transformed, redacted)."""
        state, plan = self.state, self.plan
        redactor = plan.redactor(schema)
        display = plan.transform("display", phase) if plan.transforms else None
        transcript = plan.transform("transcript", phase) if plan.transforms else None
        if display is None and transcript is None:
            # No transform: both targets show the same redacted payload; redact it once.
            shown = redactor.redact(payload)
            _put(state.display, phase, shown)
            _put(state.transcript, phase, shown)
            if phase == "output" and redactor is plan.output_redactor:
                self.output_view = (payload, shown)
            return
        for target, out, spec in (
            ("display", state.display, display),
            ("transcript", state.transcript, transcript),
        ):
            value = self._transform(spec, payload, phase, target)
            if value is transforms.SUPPRESSED:
                out.pop(phase, None)
            else:
                _put(out, phase, redactor.redact(value))

    def rescrub_deltas(self) -> None:
        """Streamed argument deltas were shown before the input was whole and its secrets
        known: where their joined text quotes a secret value (a value split across deltas
        included), they are kept as one scrubbed delta."""
        known = self.state.secrets
        if not known:
            return
        for views in (self.state.display, self.state.transcript):
            deltas = views.get("inputDelta")
            if isinstance(deltas, list) and all(isinstance(d, str) for d in deltas):
                joined = "".join(deltas)
                hidden = scrub_values(joined, known)
                if hidden != joined:
                    views["inputDelta"] = [hidden]

    async def aphase(self, phase: str, payload: Any, schema: Any = None) -> None:
        """:meth:`phase`, off the event loop when a transform of ``phase`` is a callable (user
        code may block: on a shared loop it would stall every other request)."""
        if not (self.plan.transforms and self.plan.calls_code(phase)):
            self.phase(phase, payload, schema)
            return
        try:
            await off_loop(self.phase, phase, payload, schema, name="toolctl-transform")
        except Saturated as exc:
            raise StepFailed(ErrorCode.HANDLER_ERROR.value, f"executor saturated: {exc}") from None

    def _transform(self, spec: Any, payload: Any, phase: str, target: str) -> Any:
        state = self.state
        info = {
            "phase": phase,
            "target": target,
            "toolName": state.spec.name,
            "runId": state.run_id,
            "toolCallId": state.run_id,
        }
        try:
            return transforms.apply(spec, payload, info, self.python_path)
        except (transforms.TransformError, ToolctlError) as exc:
            # Never fall back to the raw payload: show the failure instead.
            state.note(f"{target} transform for {phase} failed: {exc}")
            return {"transformError": state.scrub(str(exc))}

    # What a caller collecting a result later (runs wait, a background run) needs besides the
    # transcript: the model output and the display views. Both are transformed for their
    # audience, but a view without its own transform is the raw payload (redacted): it is kept
    # only when the transcript does not transform that payload either, so the history never
    # holds what the transcript hides.

    def _storable(self, phase: str) -> bool:
        """The display view of ``phase`` may be stored (see above)."""
        plan = self.plan
        return plan.declares("display", phase) or not plan.declares("transcript", phase)

    def stored_display(self) -> dict[str, Any]:
        """The display views the history may keep."""
        display = self.state.display
        if not self.plan.transforms:
            return dict(display)
        return {phase: value for phase, value in display.items() if self._storable(phase)}

    def stored_model_output(self, result: RunResult) -> dict[str, Any] | None:
        """The model output the history may keep (redacted), or None."""
        model = result.model_output
        if model is None:
            return None
        if result.status is RunStatus.SUSPENDED:
            return model if self._storable("suspend") else None  # it shows the suspend view
        if result.status is not RunStatus.SUCCEEDED:
            return model  # error and pending messages: built from redacted text
        spec = self.plan.spec
        if transforms.shows_raw_output(spec.to_model_output) and self.plan.declares(
            "transcript", "output"
        ):
            return None
        value = model.get("value")
        seen = self.output_view
        if seen is not None and seen[0] is value:
            # the output itself (no toModelOutput): its output view is this very redaction,
            # made already; one object, which the row encodes once (rowcodec)
            return {**model, "value": seen[1]}
        return {**model, "value": self.plan.output_redactor.redact(value)}


def _put(out: dict[str, Any], phase: str, value: Any) -> None:
    if phase == "inputDelta":
        out.setdefault(phase, []).append(value)
    else:
        out[phase] = value
