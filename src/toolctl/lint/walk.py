"""Walking what rules look at: every subschema of a tool, and every text a model reads."""

from __future__ import annotations

from collections.abc import Iterable
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


_ONE, _LIST, _MAP, _ITEMS = 1, 2, 3, 4
_KIND = {
    **dict.fromkeys(SCHEMA_VALUED, _ONE),
    **dict.fromkeys(SCHEMA_LISTS, _LIST),
    **dict.fromkeys((*SCHEMA_MAPS, "dependencies"), _MAP),
    "items": _ITEMS,
}
_KIND_KEYS = frozenset(_KIND)


def subschemas(schema: Any, path: JsonPath) -> list[tuple[JsonPath, dict[str, Any]]]:
    """Every schema object in ``schema`` (itself first, then depth-first), with its path."""
    return [(at, node) for _, at, node in _walk_into(schema, "", path, [])]


def _walk_into(
    schema: Any, key: str, path: JsonPath, out: list[tuple[str, JsonPath, dict[str, Any]]]
) -> list[tuple[str, JsonPath, dict[str, Any]]]:
    """Append (key, path, node) for every schema object in ``schema`` to ``out``, in order.

    Iterative (a deep schema cannot exhaust the stack), only mappings are pushed, and a leaf
    (most nodes) costs one set test in C.
    """
    if not isinstance(schema, dict):
        return out
    stack: list[tuple[JsonPath, dict[str, Any]]] = [(path, schema)]
    pop, emit, kinds, leaf = stack.pop, out.append, _KIND, _KIND_KEYS.isdisjoint
    while stack:
        at, node = pop()
        emit((key, at, node))
        if leaf(node):
            continue
        children: list[tuple[JsonPath, dict[str, Any]]] = []
        for word, value in node.items():
            kind = kinds.get(word)
            if kind is None:
                continue
            if kind == _ONE or (kind == _ITEMS and not isinstance(value, list)):
                if isinstance(value, dict):
                    children.append(((*at, word), value))
            elif kind in (_LIST, _ITEMS) and isinstance(value, list):
                children += [
                    ((*at, word, i), s) for i, s in enumerate(value) if isinstance(s, dict)
                ]
            elif kind == _MAP and isinstance(value, dict):
                children += [((*at, word, n), s) for n, s in value.items() if isinstance(s, dict)]
        stack += reversed(children)  # keep document order
    return out


def schema_types(node: dict[str, Any]) -> set[str]:
    """The ``type`` keyword of ``node`` as a set (empty when absent)."""
    t = node.get("type")
    return {t} if isinstance(t, str) else set(t) if isinstance(t, list) else set()


def tool_subschemas(
    tool: ToolSpec, keys: tuple[str, ...] = ()
) -> list[tuple[str, JsonPath, dict[str, Any]]]:
    """(schema key, path, node) for every subschema of the tool's schemas (all by default)."""
    from toolctl.spec.model import SCHEMA_KEYS

    out: list[tuple[str, JsonPath, dict[str, Any]]] = []
    for key in keys or SCHEMA_KEYS:
        _walk_into(tool.schema(key), key, (key,), out)
    return out


def keyword_index(
    nodes: Iterable[tuple[str, JsonPath, dict[str, Any]]],
) -> dict[str, list[tuple[str, JsonPath, dict[str, Any]]]]:
    """keyword → the ``nodes`` (schema key, path, node) that hold it, in their order."""
    index: dict[str, list[tuple[str, JsonPath, dict[str, Any]]]] = {}
    for entry in nodes:
        for word in entry[2]:
            found = index.get(word)
            if found is None:
                index[word] = [entry]
            else:
                found.append(entry)
    return index


def _strings(value: Any, path: JsonPath, out: list[tuple[JsonPath, bool, str]]) -> None:
    """Append (path, False, text) for every string in ``value``, in document order."""
    if isinstance(value, str):
        out.append((path, False, value))
    elif isinstance(value, dict):
        for k, v in value.items():
            _strings(v, (*path, k), out)
    elif isinstance(value, list):
        for i, v in enumerate(value):
            _strings(v, (*path, i), out)


def model_texts(
    tool: ToolSpec, nodes: Iterable[tuple[str, JsonPath, dict[str, Any]]] | None = None
) -> list[tuple[JsonPath, bool, str]]:
    """Every text a model reads: (path, is-a-key, text).

    The tool's name, title and description; each schema's titles, descriptions, property names,
    enum/const/default/examples strings; and the input examples (Anthropic sends them).
    ``nodes`` are the tool's subschemas when already walked.
    """
    out: list[tuple[JsonPath, bool, str]] = [
        (("name",), False, tool.name),
        (("description",), False, tool.description),
    ]
    if "title" in tool.raw:
        out.append((("title",), False, tool.raw["title"]))
    ann_title = tool.annotations.get("title")
    if isinstance(ann_title, str):
        out.append((("mcp", "annotations", "title"), False, ann_title))
    for key, path, node in tool_subschemas(tool) if nodes is None else nodes:
        if key not in MODEL_SCHEMAS:
            continue
        for word in ("title", "description"):
            if isinstance(node.get(word), str):
                out.append(((*path, word), False, node[word]))
        props = node.get("properties")
        if isinstance(props, dict):
            out += [((*path, "properties", name), True, name) for name in props]
        for word in ("enum", "const", "default", "examples"):
            if word in node:
                _strings(node[word], (*path, word), out)
    for i, example in enumerate(tool.input_examples):
        _strings(example, ("inputExamples", i), out)
    return out
