"""OpenAI Responses API function tools: flat ``{"type": "function", name, ...}`` entries.

``strict`` is always explicit: when it is omitted the Responses API normalizes the schema into
strict mode by itself, which can make optional arguments mandatory (provider-formats.md §2).

Large catalogs: a deferred function carries ``"defer_loading": true`` and the list then includes
the hosted ``{"type": "tool_search"}``; the tools of a toolset are grouped into a
``{"type": "namespace", name, description, tools}`` entry (OpenAI recommends fewer than about
ten functions per namespace); ``allowed_toolsets`` adds a ``tool_choice`` of ``allowed_tools``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from toolctl.diagnostics import Diagnostic
from toolctl.export.base import ExportOptions, Findings
from toolctl.export.loading import allowed_names, deferred
from toolctl.export.openai import OpenAIChatExporter
from toolctl.spec import ToolSpec


def output_schema(spec: ToolSpec, out: Findings) -> dict[str, Any] | None:
    """``outputSchema`` when the model sees the output as is (no reshaping ``toModelOutput``)."""
    schema = spec.output_schema
    if not isinstance(schema, dict):
        return None
    shaped = spec.to_model_output
    if shaped is not None and (
        shaped.get("type") != "json" or "pick" in shaped or "omit" in shaped
    ):
        out.info(
            "TX221",
            "outputSchema left out: toModelOutput reshapes what the model sees",
            ("toModelOutput",),
        )
        return None
    return schema  # shared read-only; export() detaches the entry


class OpenAIResponsesExporter(OpenAIChatExporter):
    """Responses function tools (same name and strict rules as Chat Completions)."""

    name = "openai-responses"
    description = "OpenAI Responses API function tools (flat {type: function, name, ...})"
    label = "OpenAI Responses"
    provider_keys = ("openai", "openai-responses")
    generated_keys = frozenset(
        {"name", "description", "parameters", "strict", "output_schema", "type"}
    )
    known_fields = generated_keys | {"defer_loading", "allowed_callers", "async"}

    def entry(self, spec: ToolSpec, options: ExportOptions, out: Findings) -> list[Any]:
        tool: dict[str, Any] = {"type": "function", **self.function(spec, options, out)}
        schema = output_schema(spec, out)
        if schema is not None:
            tool["output_schema"] = schema
        if deferred(spec, options) and "defer_loading" not in tool:
            tool["defer_loading"] = True
        return [tool]

    def allowed_choice(self, names: list[str]) -> dict[str, Any]:
        tools = [{"type": "function", "name": n} for n in names]
        return {"type": "allowed_tools", "mode": "auto", "tools": tools}

    def request(
        self, specs: Sequence[ToolSpec], per_tool: list[list[Any]], options: ExportOptions
    ) -> Any:
        tools: list[Any] = []
        spaces: dict[str, dict[str, Any]] = {}
        for spec, group in zip(specs, per_tool, strict=True):
            toolset = options.catalog.get(spec.toolset) if spec.toolset else None
            if toolset is None:
                tools.extend(group)
                continue
            space = spaces.get(toolset.name)
            if space is None:  # placed where its first tool would be (tools are in name order)
                space = spaces[toolset.name] = {
                    "type": "namespace",
                    "name": toolset.name,
                    "description": toolset.description,
                    "tools": [],
                }
                tools.append(space)
            space["tools"].extend(group)
        if any(e.get("defer_loading") is True for group in per_tool for e in group):
            tools.append({"type": "tool_search"})
        data: dict[str, Any] = {"tools": tools}
        names = allowed_names(specs, options)
        if names:
            data["tool_choice"] = self.allowed_choice(names)
        return data

    def up_front(self, specs: Sequence[ToolSpec], options: ExportOptions) -> int:
        return sum(1 for s in specs if not deferred(s, options))

    def loading_notes(self, specs: Sequence[ToolSpec], options: ExportOptions) -> list[Diagnostic]:
        return []


EXPORTER = OpenAIResponsesExporter()
export = EXPORTER.export
check = EXPORTER.check
