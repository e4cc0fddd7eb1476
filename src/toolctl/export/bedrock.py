"""AWS Bedrock Converse ``toolConfig``: ``toolSpec`` entries and ``cachePoint`` markers.

``providerOptions.bedrock.cachePoint`` (for example ``{type: default}``) adds a
``{"cachePoint": ...}`` entry right after the tool, caching the tool list up to it. Strict tools
follow Anthropic's strict rules (Bedrock's own rules are not published per model).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from toolctl.diagnostics import Diagnostic
from toolctl.export.base import ExportOptions, Findings, ToolListExporter
from toolctl.export.common import PLAIN, description, parameters
from toolctl.export.loading import allowed_problems, sent_up_front
from toolctl.export.names import BEDROCK_NAME
from toolctl.export.strict import ANTHROPIC_STRICT
from toolctl.spec import ToolSpec

BEDROCK_STRICT = dataclasses.replace(
    ANTHROPIC_STRICT, target="Bedrock strict mode (Anthropic rules)"
)


class BedrockExporter(ToolListExporter):
    """Converse API tool configuration, ``{"toolConfig": {"tools": [...]}}``."""

    name = "bedrock"
    description = "AWS Bedrock Converse toolConfig (toolSpec entries, cachePoint markers)"
    label = "Bedrock"
    provider_keys = ("bedrock",)
    generated_keys = frozenset({"name", "description", "inputSchema", "strict"})
    known_fields = generated_keys | {"cachePoint"}
    empty_refused = "toolConfig.tools needs at least one"

    def entry(self, spec: ToolSpec, options: ExportOptions, out: Findings) -> list[Any]:
        BEDROCK_NAME.check(spec.name, out)
        tool: dict[str, Any] = {
            "name": spec.name,
            "description": description(spec, options, out),
            "inputSchema": {
                "json": parameters(spec, BEDROCK_STRICT if spec.strict else PLAIN, out)
            },
        }
        if spec.strict:
            tool["strict"] = True
        merged = self.merge_provider_options(spec, tool, out)
        cache = tool.pop("cachePoint", None)
        entries: list[Any] = [{"toolSpec": tool}]
        if "cachePoint" in merged:
            entries.append({"cachePoint": cache})
        return entries

    def wrap(self, entries: list[Any], options: ExportOptions) -> Any:
        return {"toolConfig": {"tools": entries}}

    def finish(self, specs: Sequence[ToolSpec], options: ExportOptions) -> list[Diagnostic]:
        out = allowed_problems(self.label or self.name, specs, options, supported=False)
        return out + sent_up_front(self.label or self.name, specs, options)


EXPORTER = BedrockExporter()
export = EXPORTER.export
check = EXPORTER.check
