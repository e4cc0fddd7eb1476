"""Schemas: JSON Schema that is valid yet wrong, slow, unenforced or easier to abuse than meant."""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterator
from typing import Any

from toolctl.diagnostics import Severity
from toolctl.lint.context import LintContext
from toolctl.lint.model import Hit, RuleSet
from toolctl.lint.walk import schema_types
from toolctl.spec import ToolSpec

RULES = RuleSet("schemas")

KNOWN_KEYWORDS = frozenset(
    {
        "$schema",
        "$id",
        "id",
        "$ref",
        "$defs",
        "definitions",
        "$anchor",
        "$dynamicRef",
        "$dynamicAnchor",
        "$recursiveRef",
        "$recursiveAnchor",
        "$vocabulary",
        "$comment",
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "prefixItems",
        "items",
        "additionalItems",
        "contains",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "unevaluatedItems",
        "unevaluatedProperties",
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxContains",
        "minContains",
        "maxProperties",
        "minProperties",
        "required",
        "dependentRequired",
        "dependencies",
        "title",
        "description",
        "default",
        "deprecated",
        "readOnly",
        "writeOnly",
        "examples",
        "format",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
    }
)
_NOT_JSON_SCHEMA = {
    "nullable": "use `type: [string, 'null']` (nullable is OpenAPI, not JSON Schema)",
    "example": "use `examples: [...]` (a list)",
    "optional": "list required properties in the parent's `required` instead",
}


@RULES.tool(
    "TL201",
    "unknown-keyword",
    Severity.WARNING,
    "schema keyword that no JSON Schema dialect defines (a typo such as `requried`)",
)
def unknown_keyword(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A schema object has a keyword that JSON Schema does not define, such as ``requried``.

    Validators ignore unknown keywords silently, so a typo turns a constraint off: with
    ``requried: [city]`` every argument is optional. Fix the spelling, or prefix deliberate
    annotations with ``x-``.
    """
    for _key, path, node in ctx.subschemas(tool):
        if node.keys() <= KNOWN_KEYWORDS:  # the usual node, in one test in C
            continue
        for word in node:
            if word in KNOWN_KEYWORDS or word.startswith("x-"):
                continue
            near = difflib.get_close_matches(word, KNOWN_KEYWORDS, n=1, cutoff=0.75)
            hint = _NOT_JSON_SCHEMA.get(word) or (
                f"did you mean {near[0]!r}?" if near else "prefix custom annotations with x-"
            )
            yield Hit(
                tool,
                (*path, word),
                f"unknown schema keyword {word!r} is ignored",
                hint=hint,
                key=True,
            )


@RULES.tool(
    "TL202",
    "unknown-schema-dialect",
    Severity.ERROR,
    "`$schema` names a dialect toolctl does not know",
)
def unknown_dialect(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """``$schema`` names a JSON Schema dialect that toolctl does not know.

    jsonschema silently falls back to draft 2020-12 for an unknown ``$schema``, so the schema
    means something other than its author intended. Use
    ``https://json-schema.org/draft/2020-12/schema`` (the MCP default) or leave ``$schema`` out.
    """
    # Imports inside the loops (here and below): run for the nodes concerned, not every tool.
    for _key, path, node in ctx.having(tool, "$schema"):
        from toolctl.schema import dialect_of

        if "$schema" in node and dialect_of({"$schema": node["$schema"]}) is None:
            yield Hit(
                tool,
                (*path, "$schema"),
                f"unknown $schema {node['$schema']!r}",
                hint="use https://json-schema.org/draft/2020-12/schema or remove it",
            )


@RULES.tool(
    "TL207",
    "format-not-enforced",
    Severity.WARNING,
    "`format` that the validator does not check",
)
def format_not_enforced(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A ``format`` is not checked, so any string passes where the schema promises a shape.

    toolctl enforces ``format`` at run time: ``date-time``, ``date``, ``time``, ``duration``,
    ``email``, ``hostname``, ``idn-hostname``, ``ipv4``, ``ipv6``, ``uri``, ``uri-reference``,
    ``iri``, ``iri-reference``, ``uri-template``, ``uuid``, ``json-pointer``,
    ``relative-json-pointer`` and ``regex`` (each in the JSON Schema dialects that define it).
    An unknown format (``phone``), a format the schema's ``$schema`` dialect does not define
    (``duration`` before 2019-09) or one whose checker package is missing is never checked: use
    a known format, or add a ``pattern`` that enforces the shape (a schema with both is not
    reported).
    """
    for key, path, node in ctx.having(tool, "format"):
        fmt = node.get("format")
        if not isinstance(fmt, str) or "pattern" in node:
            continue
        from toolctl.schema import dialect_class, enforced_formats
        from toolctl.schemaformats import unchecked_reason

        root = tool.schema(key)
        if fmt not in enforced_formats(root):
            state, hint = unchecked_reason(fmt, dialect_class(root))
            yield Hit(
                tool, (*path, "format"), f"format {fmt!r} {state}: any string passes", hint=hint
            )


@RULES.tool(
    "TL208",
    "open-object",
    Severity.WARNING,
    "input object lists properties but leaves additionalProperties open",
)
def open_object(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """An input object lists ``properties`` but does not say ``additionalProperties: false``.

    Arguments the model invents (misspelled or hallucinated names) are then accepted silently and
    ignored by the handler. Close the object; composition branches (``allOf``) are left alone
    because closing them breaks the composition.
    """
    for key, path, node in ctx.having(tool, "properties"):
        if key != "inputSchema" or not node.get("properties") or "allOf" in path[-2:]:
            continue
        if not {"additionalProperties", "unevaluatedProperties", "patternProperties"} & set(node):
            yield Hit(
                tool,
                (*path, "properties"),
                "object accepts properties it does not list",
                hint="add additionalProperties: false",
                key=True,
            )


@RULES.tool(
    "TL209",
    "required-not-in-properties",
    Severity.WARNING,
    "`required` names a property that `properties` does not define",
)
def required_not_in_properties(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """``required`` lists a name that ``properties`` does not define.

    Usually a typo or a renamed property: the model is told the argument is required but never
    told what it is, and with ``additionalProperties: false`` no input can ever be valid.
    """
    for _key, path, node in ctx.having(tool, "required"):
        props, req = node.get("properties"), node.get("required")
        if not isinstance(props, dict) or not isinstance(req, list):
            continue
        for i, name in enumerate(req):
            if isinstance(name, str) and name not in props:
                near = difflib.get_close_matches(name, list(props), n=1)
                hint = f"did you mean {near[0]!r}?" if near else "add it to properties"
                yield Hit(
                    tool,
                    (*path, "required", i),
                    f"required property {name!r} is not defined in properties",
                    hint=hint,
                )


@RULES.tool(
    "TL210",
    "default-invalid",
    Severity.WARNING,
    "`default` that does not validate against its own schema",
)
def default_invalid(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A ``default`` value does not validate against the schema it belongs to.

    Models and clients show and use defaults; an invalid one teaches the model a wrong value and
    fails when the handler receives it. Subschemas with ``$ref`` are skipped.
    """
    for _key, path, node in ctx.having(tool, "default"):
        if "default" not in node or _has_ref(node):
            continue
        from toolctl.schema import cached_validator

        schema = {k: v for k, v in node.items() if k != "default"}
        problems = cached_validator(schema).errors(node["default"], limit=1)
        if problems:
            yield Hit(
                tool,
                (*path, "default"),
                f"default does not match its schema: {problems[0].message}",
                hint="fix the default or the schema",
            )


def _has_ref(node: Any) -> bool:
    if isinstance(node, dict):
        if "$ref" in node or "$dynamicRef" in node:
            return True
        values: Any = node.values()
    elif isinstance(node, list):
        values = node
    else:
        return False
    # calls itself only for containers: most values are scalars
    return any(isinstance(value, (dict, list)) and _has_ref(value) for value in values)


_HEADER_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")


@RULES.tool(
    "TL211",
    "mcp-header-invalid",
    Severity.ERROR,
    "`x-mcp-header` that MCP clients reject (the tool is silently dropped)",
)
def mcp_header_invalid(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """An ``x-mcp-header`` value breaks the MCP 2026-07-28 rules.

    The value must be a non-empty HTTP token (RFC 9110), unique case-insensitively within the
    tool, on a string, integer or boolean parameter. Spec-compliant clients silently drop a tool
    that breaks these rules, so it never reaches the model.
    """
    seen: dict[str, str] = {}
    for key, path, node in ctx.having(tool, "x-mcp-header"):
        if key != "inputSchema" or "x-mcp-header" not in node:
            continue
        value, at = node["x-mcp-header"], (*path, "x-mcp-header")
        types = schema_types(node)
        if not isinstance(value, str) or not _HEADER_TOKEN.match(value):
            yield Hit(
                tool,
                at,
                f"x-mcp-header {value!r} is not an HTTP header token",
                hint="use letters, digits and - only, e.g. Region",
            )
        elif value.lower() in seen:
            yield Hit(
                tool,
                at,
                f"x-mcp-header {value!r} repeats {seen[value.lower()]!r}",
                hint="header names must be unique case-insensitively",
            )
        elif len(types) != 1 or not types <= {"string", "integer", "boolean"}:
            yield Hit(
                tool,
                at,
                "x-mcp-header is only allowed on a string, integer or boolean parameter",
                hint="move it to a primitive parameter",
            )
        if isinstance(value, str):
            seen.setdefault(value.lower(), value)
