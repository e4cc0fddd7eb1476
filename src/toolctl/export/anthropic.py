"""Anthropic Messages ``tools``: ``{name, description, input_schema, ...}`` entries.

``inputExamples`` become ``input_examples``; ``providerOptions.anthropic`` carries
``cache_control``, ``allowed_callers`` and the like. A deferred tool (``loading: deferred``, its
own or its toolset's) carries ``"defer_loading": true``, and the list then ends with Anthropic's
tool search tool (BM25 by default, regex on request), through which the model finds it.
Strict tools follow Anthropic's rules, and the per-request limits (strict tools, optional and
union parameters) are summed over the export.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

from toolctl.diagnostics import Diagnostic, error
from toolctl.export.base import ExportOptions, Findings, ToolListExporter, check_choice
from toolctl.export.common import PLAIN, example_inputs, parameters
from toolctl.export.convert import Profile
from toolctl.export.loading import allowed_problems, deferred
from toolctl.export.names import ANTHROPIC_NAME, NameRule
from toolctl.export.strict import ANTHROPIC_STRICT
from toolctl.spec import ToolSpec

# Per-request limits of Anthropic strict mode (provider-formats.md §4).
MAX_STRICT_TOOLS = 20
MAX_OPTIONAL = 24
MAX_UNIONS = 16
# Anthropic's server tools that search the deferred tools (anthropic.types.ToolUnionParam).
TOOL_SEARCH = {
    "bm25": {"type": "tool_search_tool_bm25_20251119", "name": "tool_search_tool_bm25"},
    "regex": {"type": "tool_search_tool_regex_20251119", "name": "tool_search_tool_regex"},
}


def _objects(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, list):
        for item in node:
            yield from _objects(item)
    elif isinstance(node, dict):
        if isinstance(node.get("properties"), dict):
            yield node
        for key, value in node.items():
            if key not in ("enum", "const", "default", "examples"):
                yield from _objects(value)


def count_optional_and_unions(schema: Any) -> tuple[int, int]:
    """Optional parameters and parameters with unions (anyOf or a type list) in a schema."""
    optional = unions = 0
    for obj in _objects(schema):
        required = set(obj.get("required", ()))
        for name, sub in obj["properties"].items():
            optional += name not in required
            if isinstance(sub, dict) and ("anyOf" in sub or isinstance(sub.get("type"), list)):
                unions += 1
    return optional, unions


class AnthropicExporter(ToolListExporter):
    """Anthropic custom tools."""

    name = "anthropic"
    description = "Anthropic Messages tools ({name, description, input_schema, ...})"
    label = "Anthropic"
    provider_keys: tuple[str, ...] = ("anthropic",)
    generated_keys = frozenset({"name", "description", "input_schema", "input_examples", "strict"})
    known_fields = generated_keys | {
        "cache_control",
        "defer_loading",
        "allowed_callers",
        "eager_input_streaming",
        "type",
    }
    name_rule: NameRule = ANTHROPIC_NAME
    strict_profile: Profile = ANTHROPIC_STRICT

    def entry(self, spec: ToolSpec, options: ExportOptions, out: Findings) -> list[Any]:
        self.name_rule.check(spec.name, out)
        tool: dict[str, Any] = {
            "name": spec.name,
            "description": spec.description,
            "input_schema": parameters(spec, self.strict_profile if spec.strict else PLAIN, out),
        }
        if spec.input_examples:
            tool["input_examples"] = example_inputs(spec)
        if spec.strict:
            tool["strict"] = True
        if deferred(spec, options):
            tool["defer_loading"] = True
        self.merge_provider_options(spec, tool, out)
        return [tool]

    def wrap(self, entries: list[Any], options: ExportOptions) -> Any:
        # The search tool only when something is deferred (after providerOptions, which may
        # set defer_loading too): the API refuses deferred tools without one.
        if any(e.get("defer_loading") is True for e in entries):
            return {"tools": [*entries, dict(TOOL_SEARCH.get(options.tool_search, {}))]}
        return {"tools": entries}

    def finish(self, specs: Sequence[ToolSpec], options: ExportOptions) -> list[Diagnostic]:
        out = check_choice("Anthropic tool search", options.tool_search, tuple(TOOL_SEARCH))
        out += allowed_problems(self.label, specs, options, supported=False)
        return out + self._strict_limits(specs)

    def _strict_limits(self, specs: Sequence[ToolSpec]) -> list[Diagnostic]:
        strict = [s for s in specs if s.strict]
        if not strict:
            return []
        optional = unions = 0
        for spec in strict:
            schema = parameters(spec, self.strict_profile, Findings(spec, self.label))
            o, u = count_optional_and_unions(schema)
            optional, unions = optional + o, unions + u
        out: list[Diagnostic] = []
        for count, limit, what in (
            (len(strict), MAX_STRICT_TOOLS, "strict tools"),
            (optional, MAX_OPTIONAL, "optional parameters in strict tools"),
            (unions, MAX_UNIONS, "parameters with unions in strict tools"),
        ):
            if count > limit:
                out.append(
                    error(
                        None,
                        "TX331",
                        f"{self.label}: {count} {what}; a request accepts at most {limit}",
                        hint="export fewer strict tools (--tool/--tag) or make some "
                        "parameters required",
                    )
                )
        return out


EXPORTER = AnthropicExporter()
export = EXPORTER.export
check = EXPORTER.check
