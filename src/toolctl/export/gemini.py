"""Google Gemini ``functionDeclarations``, as JSON Schema (default) or the OpenAPI subset.

The default puts the schema in ``parametersJsonSchema``, which Gemini reads as JSON Schema
(``$ref`` and recursion included) and keeps only the keywords the google-genai ``JSONSchema``
type declares. ``gemini_parameters="openapi"`` emits the older ``parameters`` form instead: an
OpenAPI 3.0 subset with upper-case types and ``nullable``, every ``$ref`` inlined and recursion
refused.

Gemini loads every declaration up front: deferred tools are exported too (with a note). To keep
a request small, export one toolset (``--toolset``); ``allowed_toolsets`` adds a
``toolConfig.functionCallingConfig`` in ``VALIDATED`` mode with ``allowedFunctionNames``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from toolctl.diagnostics import Diagnostic
from toolctl.export.base import ExportOptions, Findings, JsonPath, ToolListExporter, check_choice
from toolctl.export.common import description, has_parameters, parameters
from toolctl.export.convert import Profile, convert
from toolctl.export.loading import allowed_names, allowed_problems, sent_up_front
from toolctl.export.names import GEMINI_NAME
from toolctl.spec import ToolSpec

_COMMON = frozenset(
    {
        "type",
        "format",
        "title",
        "description",
        "default",
        "items",
        "minItems",
        "maxItems",
        "enum",
        "properties",
        "required",
        "minProperties",
        "maxProperties",
        "minimum",
        "maximum",
        "minLength",
        "maxLength",
        "pattern",
        "additionalProperties",
        "anyOf",
    }
)
JSON_SCHEMA = Profile(
    "Gemini parametersJsonSchema",
    keywords=_COMMON | {"uniqueItems", "$ref", "$defs", "oneOf"},
    const_to_enum=True,
)
OPENAPI = Profile(
    "Gemini OpenAPI parameters",
    keywords=_COMMON | {"propertyOrdering"},
    inline_refs=True,
    recursion=False,
    const_to_enum=True,
)
MODES = ("json-schema", "openapi")


def _openapi_type(node: dict[str, Any], out: dict[str, Any]) -> None:
    t = node.get("type")
    types = [t] if isinstance(t, str) else list(t or [])
    if "null" in types and len(types) > 1:
        out["nullable"] = True
        types.remove("null")
    if len(types) == 1:
        out["type"] = types[0].upper()
    elif types:
        out["anyOf"] = [{"type": x.upper()} for x in types]


def to_openapi(node: Any, findings: Findings, path: JsonPath) -> Any:
    """A JSON Schema (already reduced to :data:`OPENAPI` keywords) as a Gemini ``Schema``."""
    if not isinstance(node, dict):
        return {} if node is True else node
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key == "type":
            _openapi_type(node, out)
        elif key == "properties":
            out[key] = {n: to_openapi(s, findings, (*path, key, n)) for n, s in value.items()}
        elif key in ("items", "additionalProperties") and isinstance(value, dict):
            out[key] = to_openapi(value, findings, (*path, key))
        elif key == "anyOf":
            branches = [b for b in value if b != {"type": "null"}]
            if len(branches) < len(value):
                out["nullable"] = True
            out[key] = [to_openapi(b, findings, (*path, key, i)) for i, b in enumerate(branches)]
        elif key == "enum":
            if None in value:
                out["nullable"] = True
            values = [v for v in value if v is not None]
            if all(isinstance(v, str) for v in values):
                out[key] = values
            else:
                findings.warning(
                    "TX302",
                    f"dropped enum {json.dumps(values)} (Gemini OpenAPI "
                    "parameters allow string enums only)",
                    (*path, key),
                    hint="use gemini_parameters='json-schema', or string values",
                )
        else:
            out[key] = value
    if "anyOf" in out and len(out["anyOf"]) == 1 and "type" not in out:
        out = {**out.pop("anyOf")[0], **out}
    return out


class GeminiExporter(ToolListExporter):
    """Gemini function declarations, wrapped as ``{"tools": [{"functionDeclarations": [...]}]}``."""

    name = "gemini"
    description = "Google Gemini functionDeclarations (parametersJsonSchema; OpenAPI on request)"
    label = "Gemini"
    provider_keys = ("google", "gemini")
    generated_keys = frozenset(
        {
            "name",
            "description",
            "parameters",
            "parametersJsonSchema",
            "response",
            "responseJsonSchema",
        }
    )
    known_fields = generated_keys | {"behavior"}

    def entry(self, spec: ToolSpec, options: ExportOptions, out: Findings) -> list[Any]:
        GEMINI_NAME.check(spec.name, out)
        if spec.strict:
            out.info(
                "TX222",
                "Gemini has no per-tool strict flag; set "
                "toolConfig.functionCallingConfig.mode to VALIDATED in the request",
                ("strict",),
            )
        decl: dict[str, Any] = {"name": spec.name, "description": description(spec, options, out)}
        if options.gemini_parameters == "openapi":
            schema = parameters(spec, OPENAPI, out)
            if has_parameters(schema):
                decl["parameters"] = to_openapi(schema, out, ("inputSchema",))
            if spec.output_schema is not None:
                out.info(
                    "TX221",
                    "outputSchema left out (use the json-schema form for responseJsonSchema)",
                    ("outputSchema",),
                )
        else:
            schema = parameters(spec, JSON_SCHEMA, out)
            if has_parameters(schema):
                decl["parametersJsonSchema"] = schema
            if isinstance(spec.output_schema, dict):
                decl["responseJsonSchema"], _ = convert(
                    spec.output_schema, JSON_SCHEMA, out, ("outputSchema",)
                )
        self.merge_provider_options(spec, decl, out)
        return [decl]

    def finish(self, specs: Sequence[ToolSpec], options: ExportOptions) -> list[Diagnostic]:
        out = check_choice("Gemini parameters form", options.gemini_parameters, MODES)
        out += allowed_problems(self.label, specs, options, supported=True)
        return out + sent_up_front(self.label, specs, options)

    def wrap(self, entries: list[Any], options: ExportOptions) -> Any:
        return {"tools": [{"functionDeclarations": entries}] if entries else []}

    def request(
        self, specs: Sequence[ToolSpec], per_tool: list[list[Any]], options: ExportOptions
    ) -> Any:
        data: dict[str, Any] = self.wrap([e for group in per_tool for e in group], options)
        names = allowed_names(specs, options)
        if names:
            # VALIDATED: the model may answer in text or call one of these (ANY forces a call)
            config = {"mode": "VALIDATED", "allowedFunctionNames": names}
            data["toolConfig"] = {"functionCallingConfig": config}
        return data


EXPORTER = GeminiExporter()
export = EXPORTER.export
check = EXPORTER.check
