"""OpenAI Chat Completions ``tools``: ``{"type": "function", "function": {...}}`` entries."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolctl.diagnostics import Diagnostic, warning
from toolctl.export.base import ExportOptions, Findings, ToolListExporter
from toolctl.export.common import PLAIN, description, parameters
from toolctl.export.convert import Profile
from toolctl.export.names import (
    OPENAI_DESCRIPTION_LIMIT,
    OPENAI_NAME,
    NameRule,
    check_description_length,
)
from toolctl.export.strict import OPENAI_STRICT
from toolctl.spec import ToolSpec

MAX_TOOLS = 128


class OpenAIChatExporter(ToolListExporter):
    """Chat Completions function tools; ``strict`` is always explicit (the API defaults to off)."""

    name = "openai"
    description = "OpenAI Chat Completions tools ({type: function, function: {...}})"
    label = "OpenAI Chat Completions"
    provider_keys: tuple[str, ...] = ("openai",)
    generated_keys = frozenset({"name", "description", "parameters", "strict"})
    known_fields: frozenset[str] | None = generated_keys
    name_rule: NameRule = OPENAI_NAME
    strict_profile: Profile = OPENAI_STRICT
    description_limit: int | None = OPENAI_DESCRIPTION_LIMIT
    max_tools: int | None = MAX_TOOLS

    def function(self, spec: ToolSpec, options: ExportOptions, out: Findings) -> dict[str, Any]:
        """The ``function`` object: name, description, parameters, strict, providerOptions."""
        self.name_rule.check(spec.name, out)
        strict = spec.strict
        text = description(spec, options, out, openai_strict=strict)
        if self.description_limit is not None:
            check_description_length(text, self.description_limit, out)
        fn: dict[str, Any] = {
            "name": spec.name,
            "description": text,
            "parameters": parameters(spec, self.strict_profile if strict else PLAIN, out),
            "strict": spec.strict,
        }
        self.merge_provider_options(spec, fn, out)
        return fn

    def entry(self, spec: ToolSpec, options: ExportOptions, out: Findings) -> list[Any]:
        return [{"type": "function", "function": self.function(spec, options, out)}]

    def finish(self, specs: Sequence[ToolSpec], options: ExportOptions) -> list[Diagnostic]:
        if self.max_tools is not None and len(specs) > self.max_tools:
            return [
                warning(
                    None,
                    "TX111",
                    f"{self.label}: {len(specs)} tools; the API accepts "
                    f"at most {self.max_tools} per request",
                    hint="export a subset with --tool or --tag",
                )
            ]
        return []


EXPORTER = OpenAIChatExporter()
export = EXPORTER.export
check = EXPORTER.check
