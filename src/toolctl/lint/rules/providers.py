"""Provider compatibility: would each tool export cleanly to each selected provider's format?

The provider facts (name rules, strict-mode subsets, unsupported keywords, list limits) come from
``shared/reference/provider-formats.md`` and live in this one module. Select providers with
``--provider openai,anthropic`` or ``lint.providers``; rules skip providers not selected.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from toolctl.diagnostics import Severity
from toolctl.lint.context import LintContext
from toolctl.lint.model import Hit, RuleSet
from toolctl.spec import ToolSpec

RULES = RuleSet("providers")


@dataclass(frozen=True)
class NameRule:
    """A provider's tool-name rule: a regex and how to say it."""

    regex: re.Pattern[str]
    text: str


_FN64 = NameRule(re.compile(r"[a-zA-Z0-9_-]{1,64}\Z"), "letters, digits, _ and -, at most 64")
NAME_RULES = {
    "openai": _FN64,
    "openai-responses": _FN64,
    "anthropic": _FN64,
    "bedrock": _FN64,
    "mistral": _FN64,
    "gemini": NameRule(
        re.compile(r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}\Z"),
        "a letter or _ first, then letters, digits, _ . -, at most 64",
    ),
    "mcp": NameRule(
        re.compile(r"(?![.-])[A-Za-z0-9._-]{1,128}(?<![.-])\Z"),
        "letters, digits, _ . -, at most 128, no leading or trailing . or -",
    ),
}
STRICT_PROVIDERS = ("openai", "openai-responses", "anthropic")
STRICT_UNSUPPORTED = (
    "not",
    "if",
    "then",
    "else",
    "dependentRequired",
    "dependentSchemas",
    "patternProperties",
    "unevaluatedProperties",
    "propertyNames",
)
GEMINI_AVOID = (
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "const",
    "patternProperties",
    "dependentSchemas",
    "dependentRequired",
    "unevaluatedProperties",
)
MAX_TOOLS = {"openai": 128, "openai-responses": 128}
MAX_STRICT_TOOLS = {"anthropic": 20}


def _selected(ctx: LintContext, providers: Sequence[str]) -> list[str]:
    return [p for p in providers if p in ctx.config.providers]


def _safe_name(name: str) -> str:
    safe = re.sub(r"[^a-zA-Z0-9_-]", "_", name)[:64]
    return safe if safe[:1].isalpha() else f"t_{safe}"[:64]


@RULES.tool(
    "TL301", "provider-name", Severity.WARNING, "tool name that a selected provider rejects"
)
def provider_name(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """The tool's name breaks a selected provider's name rule, so that export fails.

    OpenAI, Anthropic, Bedrock and Mistral accept ``^[a-zA-Z0-9_-]{1,64}$``; Gemini needs a letter
    or ``_`` first and allows dots; MCP (SEP-986) allows dots and 128 characters but not a
    leading or trailing ``-``/``.``. Safe everywhere: ``^[a-zA-Z][a-zA-Z0-9_-]{0,63}$``.
    """
    failing = [
        p for p in _selected(ctx, list(NAME_RULES)) if not NAME_RULES[p].regex.match(tool.name)
    ]
    if failing:
        rule = NAME_RULES[failing[0]].text
        yield Hit(
            tool,
            ("name",),
            f"name {tool.name!r} is rejected by {', '.join(failing)} ({rule})",
            hint=f"rename it, e.g. {_safe_name(tool.name)!r}",
        )


@RULES.tool(
    "TL302",
    "strict-unsupported",
    Severity.ERROR,
    "`strict: true` with a schema the provider's strict mode cannot express",
)
def strict_unsupported(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """``strict: true`` but the input schema uses what OpenAI/Anthropic strict mode rejects.

    Strict mode supports a subset of JSON Schema: every object closed, no ``not``,
    ``if/then/else``, ``dependent*``, ``patternProperties``, no open-ended maps
    (``additionalProperties: true`` or a schema), no ``anyOf`` at the root, ``allOf`` only as a
    single entry. The export cannot keep the meaning, so it fails.
    """
    providers = _selected(ctx, STRICT_PROVIDERS)
    if not tool.strict or not providers:
        return
    for key, path, node in ctx.subschemas(tool):
        if key != "inputSchema":
            continue
        for word in STRICT_UNSUPPORTED:
            if word in node:
                yield Hit(
                    tool,
                    (*path, word),
                    f"strict mode ({', '.join(providers)}) does not support {word!r}",
                    hint="drop strict, or restate the constraint without it",
                    key=True,
                )
        extra = node.get("additionalProperties")
        if extra is True or isinstance(extra, dict):
            yield Hit(
                tool,
                (*path, "additionalProperties"),
                "strict mode cannot express an open map (additionalProperties must be false)",
                hint="use a list of {key, value} objects, or drop strict",
                key=True,
            )
        if isinstance(node.get("allOf"), list) and len(node["allOf"]) > 1:
            yield Hit(
                tool,
                (*path, "allOf"),
                "strict mode supports allOf only with one entry",
                hint="merge the allOf branches into one object",
                key=True,
            )
        if len(path) == 1 and ("anyOf" in node or "oneOf" in node):
            yield Hit(
                tool,
                path,
                "strict mode rejects anyOf/oneOf at the root",
                hint="make the root one object with a discriminator property",
            )


@RULES.tool(
    "TL303",
    "provider-keyword-unsupported",
    Severity.WARNING,
    "schema keyword that Gemini ignores or rejects",
)
def provider_keyword(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """The input schema uses keywords outside Gemini's supported JSON Schema subset.

    Gemini's ``parametersJsonSchema`` documents a subset (type, enum, items, properties,
    required, anyOf, $ref, min/max ...); ``allOf``, ``not``, ``if/then/else``, ``const`` and
    ``patternProperties`` are ignored or rejected. Use ``enum: [x]`` for ``const`` and
    restate the rest with supported keywords.
    """
    if not _selected(ctx, ["gemini"]):
        return
    for key, path, node in ctx.subschemas(tool):
        if key != "inputSchema":
            continue
        for word in GEMINI_AVOID:
            if word in node:
                hint = (
                    "use enum: [value]"
                    if word == "const"
                    else "restate it with type/enum/anyOf/properties"
                )
                yield Hit(
                    tool, (*path, word), f"gemini does not support {word!r}", hint=hint, key=True
                )


@RULES.tool(
    "TL304",
    "output-schema-not-object",
    Severity.WARNING,
    "outputSchema whose root is not an object (MCP 2025-11-25)",
)
def output_schema_not_object(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """``outputSchema`` has a root that is not ``type: object``.

    MCP 2025-11-25 (the most deployed revision) requires an object output schema, because
    ``structuredContent`` is an object; 2026-07-28 relaxes this. Wrap the value:
    ``{type: object, properties: {result: ...}}``.
    """
    schema = tool.output_schema
    if not _selected(ctx, ["mcp"]) or not isinstance(schema, dict):
        return
    if schema.get("type") != "object":
        yield Hit(
            tool,
            ("outputSchema",),
            "outputSchema root is not type: object; MCP 2025-11-25 clients reject it",
            hint="wrap it: {type: object, properties: {result: ...}}",
        )


@RULES.registry(
    "TL305",
    "too-many-tools",
    Severity.WARNING,
    "more tools (or strict tools) than a provider accepts in one request",
)
def too_many_tools(tools: Sequence[ToolSpec], ctx: LintContext) -> Iterator[Hit]:
    """The registry has more enabled tools than a provider accepts in one request.

    OpenAI accepts at most 128 tools per request; Anthropic at most 20 strict tools. Export a
    subset per agent (``--tag``), or turn some tools off.
    """
    enabled = [t for t in tools if t.enabled]
    strict = [t for t in enabled if t.strict]
    for limits, group, what, path in (
        (MAX_TOOLS, enabled, "enabled", "name"),
        (MAX_STRICT_TOOLS, strict, "strict", "strict"),
    ):
        for provider in _selected(ctx, list(limits)):
            limit = limits[provider]
            if len(group) > limit:
                yield Hit(
                    group[limit],
                    (path,),
                    f"{len(group)} {what} tools; {provider} accepts at most {limit} per request",
                    hint="export a subset by tag",
                )
