"""OpenAI Chat Completions ``tools``: ``{"type": "function", "function": {...}}`` entries.

Chat Completions loads every tool up front (deferred tools are exported too, with a note);
``allowed_toolsets`` adds ``tool_choice: {"type": "allowed_tools", ...}`` naming their tools.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolctl.diagnostics import Diagnostic, warning
from toolctl.export.base import ExportOptions, Findings, ToolListExporter
from toolctl.export.common import PLAIN, description, parameters
from toolctl.export.convert import Profile
from toolctl.export.loading import allowed_names, allowed_problems, sent_up_front
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
    allows_names = True  # tool_choice {"type": "allowed_tools"} exists on this API

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

    def allowed_choice(self, names: list[str]) -> dict[str, Any]:
        """``tool_choice`` restricting the model to the tools ``names``."""
        tools = [{"type": "function", "function": {"name": n}} for n in names]
        return {"type": "allowed_tools", "allowed_tools": {"mode": "auto", "tools": tools}}

    def request(
        self, specs: Sequence[ToolSpec], per_tool: list[list[Any]], options: ExportOptions
    ) -> Any:
        data: dict[str, Any] = self.wrap([e for group in per_tool for e in group], options)
        names = allowed_names(specs, options) if self.allows_names else None
        if names:
            data["tool_choice"] = self.allowed_choice(names)
        return data

    def up_front(self, specs: Sequence[ToolSpec], options: ExportOptions) -> int:
        """How many tools the model gets up front (all of them: no deferred loading)."""
        return len(specs)

    def finish(self, specs: Sequence[ToolSpec], options: ExportOptions) -> list[Diagnostic]:
        out = allowed_problems(self.label, specs, options, supported=self.allows_names)
        out += self.loading_notes(specs, options)
        count = self.up_front(specs, options)
        if self.max_tools is not None and count > self.max_tools:
            out.append(
                warning(
                    None,
                    "TX111",
                    f"{self.label}: {count} tools; the API accepts "
                    f"at most {self.max_tools} per request",
                    hint="export a subset with --tool, --tag or --toolset, or defer tools",
                )
            )
        return out

    def loading_notes(self, specs: Sequence[ToolSpec], options: ExportOptions) -> list[Diagnostic]:
        """What this target does with deferred tools (Chat Completions: sends them anyway)."""
        return sent_up_front(self.label, specs, options)


EXPORTER = OpenAIChatExporter()
export = EXPORTER.export
check = EXPORTER.check
