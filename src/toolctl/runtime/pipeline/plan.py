"""The per-tool plan: what every call of one tool needs, worked out once per tool definition.

Specs are frozen, so the plan is cached by spec object: the transforms of each view, the
redactors and whether a schema marks secrets at all, the timeouts. A tool without transforms
does its views with one redaction per phase, a tool without ``x-sensitive``/``writeOnly``
fields redacts by key names and value shapes only (see :mod:`toolctl.runtime.redact`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from toolctl.runtime.memo import PerObject
from toolctl.runtime.redact import Redactor, redactor_for
from toolctl.schema import cached_validator
from toolctl.schemadefaults import has_defaults
from toolctl.sensitive import SensitiveMap, sensitive_map

if TYPE_CHECKING:
    from toolctl.schema import Validator
    from toolctl.spec import ToolSpec


_VALIDATORS: PerObject[Any, Validator] = PerObject(cached_validator)


def validator_for(schema: Any) -> Validator:
    """The validator of ``schema``, memoised per schema object (specs are frozen, so identity
    is a cheap key in front of ``cached_validator``'s content key)."""
    return _VALIDATORS(schema)


class ToolPlan:
    """What the pipeline looks up for every call of one tool."""

    __slots__ = (
        "background",
        "background_timeout",
        "display",
        "fills_defaults",
        "input_redactor",
        "input_validator",
        "output_redactor",
        "output_schema",
        "output_sensitive",
        "output_validator",
        "spec",
        "timeout",
        "transcript",
        "transforms",
    )

    def __init__(self, spec: ToolSpec) -> None:
        self.spec = spec
        declared = spec.transform or {}
        self.display: dict[str, Any] = dict(declared.get("display") or {})
        self.transcript: dict[str, Any] = dict(declared.get("transcript") or {})
        self.transforms = bool(self.display or self.transcript)
        self.input_redactor: Redactor = redactor_for(spec.input_schema)
        self.input_validator: Validator = validator_for(spec.input_schema)
        # whether the input schema declares any `default` to fill in (most tools: no walk)
        self.fills_defaults = spec.apply_defaults and has_defaults(spec.input_schema)
        self.output_schema = spec.output_schema if isinstance(spec.output_schema, dict) else None
        self.output_redactor: Redactor = redactor_for(self.output_schema)
        # the output's sensitive locations, pruned from what the model sees (None: nothing to
        # prune, the common case: no walk)
        shown = sensitive_map(self.output_schema)
        self.output_sensitive: SensitiveMap | None = shown if shown.any else None
        self.output_validator: Validator | None = (
            None if spec.output_schema is None else validator_for(spec.output_schema)
        )
        self.timeout = spec.timeout
        self.background_timeout = spec.background_timeout or spec.timeout
        self.background = bool(spec.background)

    def transform(self, target: str, phase: str) -> Any:
        """The declared ``target`` (display/transcript) transform of ``phase``, or None."""
        return (self.display if target == "display" else self.transcript).get(phase)

    def redactor(self, schema: Any) -> Redactor:
        """The redactor of ``schema`` (the tool's own schemas without a lookup)."""
        if schema is self.spec.input_schema:
            return self.input_redactor
        if schema is self.output_schema:
            return self.output_redactor
        return redactor_for(schema)

    def calls_code(self, phase: str) -> bool:
        """True when a display or transcript transform of ``phase`` is a callable."""
        return self.transforms and any(
            isinstance(spec, dict) and "call" in spec
            for spec in (self.display.get(phase), self.transcript.get(phase))
        )

    def declares(self, target: str, phase: str) -> bool:
        declared = self.display if target == "display" else self.transcript
        if phase == "approval" and "approval" not in declared:
            phase = "input"  # the approval view defaults to the input view
        return phase in declared


_PLANS: PerObject[ToolSpec, ToolPlan] = PerObject(ToolPlan)


def plan_for(spec: ToolSpec) -> ToolPlan:
    """The plan of ``spec``, made once per spec object."""
    return _PLANS(spec)
