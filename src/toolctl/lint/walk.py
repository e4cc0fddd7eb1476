"""Walking what rules look at: every subschema of a tool, and every text a model reads."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from toolctl.yamlsrc import JsonPath

if TYPE_CHECKING:
    from toolctl.spec import ToolSpec

# Keywords whose value is a schema, a list of schemas, or a mapping of name → schema.
SCHEMA_VALUED = (
    "additionalProperties",
    "additionalItems",
    "unevaluatedItems",
    "unevaluatedProperties",
    "propertyNames",
    "contains",
    "not",
    "if",
    "then",
    "else",
    "contentSchema",
)
SCHEMA_LISTS = ("allOf", "anyOf", "oneOf", "prefixItems")
SCHEMA_MAPS = ("properties", "patternProperties", "$defs", "definitions", "dependentSchemas")
MODEL_SCHEMAS = ("inputSchema", "outputSchema")
"""The schemas a model (or a provider export) sees."""


def subschemas(schema: Any, path: JsonPath) -> Iterator[tuple[JsonPath, dict[str, Any]]]:
    """Every schema object in ``schema`` (itself first), with its path."""
    if not isinstance(schema, dict):
        return
    yield path, schema
    for key in SCHEMA_VALUED:
        if key in schema:
            yield from subschemas(schema[key], (*path, key))
    items = schema.get("items")
    if isinstance(items, list):
        for i, sub in enumerate(items):
            yield from subschemas(sub, (*path, "items", i))
    elif items is not None:
        yield from subschemas(items, (*path, "items"))
    for key in SCHEMA_LISTS:
        value = schema.get(key)
        if isinstance(value, list):
            for i, sub in enumerate(value):
                yield from subschemas(sub, (*path, key, i))
    for key in (*SCHEMA_MAPS, "dependencies"):
        value = schema.get(key)
        if isinstance(value, dict):
            for name, sub in value.items():
                yield from subschemas(sub, (*path, key, name))


def schema_types(node: dict[str, Any]) -> set[str]:
    """The ``type`` keyword of ``node`` as a set (empty when absent)."""
    t = node.get("type")
    return {t} if isinstance(t, str) else set(t) if isinstance(t, list) else set()


def tool_subschemas(
    tool: ToolSpec, keys: tuple[str, ...] = ()
) -> Iterator[tuple[str, JsonPath, dict[str, Any]]]:
    """(schema key, path, node) for every subschema of the tool's schemas (all by default)."""
    from toolctl.spec.model import SCHEMA_KEYS

    for key in keys or SCHEMA_KEYS:
        yield from ((key, p, n) for p, n in subschemas(tool.schema(key), (key,)))


def _strings(value: Any, path: JsonPath) -> Iterator[tuple[JsonPath, str]]:
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, (*path, i))


def model_texts(tool: ToolSpec) -> Iterator[tuple[JsonPath, bool, str]]:
    """Every text a model reads: (path, is-a-key, text).

    The tool's name, title and description; each schema's titles, descriptions, property names,
    enum/const/default/examples strings; and the input examples (Anthropic sends them).
    """
    yield ("name",), False, tool.name
    yield ("description",), False, tool.description
    if "title" in tool.raw:
        yield ("title",), False, tool.raw["title"]
    ann_title = tool.annotations.get("title")
    if isinstance(ann_title, str):
        yield ("mcp", "annotations", "title"), False, ann_title
    for _key, path, node in tool_subschemas(tool, MODEL_SCHEMAS):
        for word in ("title", "description"):
            if isinstance(node.get(word), str):
                yield (*path, word), False, node[word]
        props = node.get("properties")
        if isinstance(props, dict):
            for name in props:
                yield (*path, "properties", name), True, name
        for word in ("enum", "const", "default", "examples"):
            if word in node:
                for spath, text in _strings(node[word], (*path, word)):
                    yield spath, False, text
    for i, example in enumerate(tool.input_examples):
        for spath, text in _strings(example, ("inputExamples", i)):
            yield spath, False, text
