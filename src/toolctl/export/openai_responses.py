"""OpenAI Responses API function tools: flat ``{"type": "function", name, ...}`` entries.

``strict`` is always explicit: when it is omitted the Responses API normalizes the schema into
strict mode by itself, which can make optional arguments mandatory (provider-formats.md §2).
"""

from __future__ import annotations

from typing import Any

from toolctl.export.base import ExportOptions, Findings
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
        return [tool]


EXPORTER = OpenAIResponsesExporter()
export = EXPORTER.export
check = EXPORTER.check
