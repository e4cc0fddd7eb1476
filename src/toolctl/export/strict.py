"""Strict-mode rules for OpenAI and Anthropic, and the instance mapping they imply.

OpenAI strict mode requires every property (optional ones become nullable and required), closes
every object, and accepts a keyword subset with size limits. Anthropic strict mode closes every
object but keeps optional properties, forbids recursion and drops numeric and length bounds
(provider-formats.md §3 and §4). Both are :class:`~toolctl.export.convert.Profile` values.

Under the OpenAI rules a model sends ``null`` for an optional argument it leaves out;
:func:`from_strict_instance` maps such a call back to the original shape (the runtime applies it
before validating input), and :func:`to_strict_instance` is its inverse.
"""

from __future__ import annotations

from typing import Any

from toolctl.export.convert import Profile
from toolctl.refs import parse_pointer, resolve_pointer
from toolctl.schema import cached_validator

_CORE = frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "anyOf",
        "enum",
        "$ref",
        "$defs",
        "definitions",
        "description",
        "title",
    }
)

OPENAI_STRICT = Profile(
    "OpenAI strict mode",
    keywords=_CORE
    | {
        "pattern",
        "format",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "minItems",
        "maxItems",
    },
    strict="openai",
    const_to_enum=True,
    formats=frozenset(
        {"date-time", "time", "date", "duration", "email", "hostname", "ipv4", "ipv6", "uuid"}
    ),
    describe_dropped=True,
)

ANTHROPIC_STRICT = Profile(
    "Anthropic strict mode",
    keywords=_CORE | {"allOf", "const", "default", "format", "pattern", "minItems"},
    recursion=False,
    strict="anthropic",
    formats=frozenset(
        {
            "date-time",
            "time",
            "date",
            "duration",
            "email",
            "hostname",
            "uri",
            "ipv4",
            "ipv6",
            "uuid",
        }
    ),
    max_min_items=1,
    describe_dropped=True,
)


def _context(root: Any, sub: Any) -> Any:
    """``sub`` as a standalone schema that can still follow the root's ``#/$defs`` refs."""
    if not isinstance(sub, dict) or not isinstance(root, dict):
        return sub
    defs = {k: root[k] for k in ("$defs", "definitions") if k in root}
    return {**defs, **sub} if defs else sub


def _valid(root: Any, sub: Any, instance: Any) -> bool:
    return cached_validator(_context(root, sub)).is_valid(instance)


def _deref(root: Any, node: Any) -> Any:
    seen: set[str] = set()
    while (
        isinstance(node, dict)
        and isinstance(node.get("$ref"), str)
        and node["$ref"].startswith("#")
        and node["$ref"] not in seen
    ):
        seen.add(node["$ref"])
        rest = {k: v for k, v in node.items() if k != "$ref"}
        node = resolve_pointer(root, parse_pointer(node["$ref"][1:]))
        if rest and isinstance(node, dict):
            node = {**node, **rest}
    return node


def _map(root: Any, schema: Any, value: Any, forward: bool) -> Any:
    schema = _deref(root, schema)
    if not isinstance(schema, dict):
        return value
    for key in ("anyOf", "oneOf"):
        for branch in schema.get(key, ()):
            if forward and _valid(root, branch, value):
                return _map(root, branch, value, forward)
            if not forward:
                back = _map(root, branch, value, forward)
                if _valid(root, branch, back):
                    return back
    for branch in schema.get("allOf", ()):
        value = _map(root, branch, value, forward)
    if isinstance(value, dict) and isinstance(schema.get("properties"), dict):
        required = set(schema.get("required", ()))
        out = dict(value)
        for name, sub in schema["properties"].items():
            optional = name not in required
            if forward and optional and name not in out:
                out[name] = None
            elif (
                not forward
                and optional
                and out.get(name, 0) is None
                and not _valid(root, sub, None)
            ):
                del out[name]
            elif name in out:
                out[name] = _map(root, sub, out[name], forward)
        return out
    if isinstance(value, list) and isinstance(schema.get("items"), (dict, bool)):
        return [_map(root, schema["items"], v, forward) for v in value]
    return value


def to_strict_instance(schema: dict[str, Any], instance: Any) -> Any:
    """An instance valid under ``schema`` as the OpenAI-strict form expects it (absent → null)."""
    return _map(schema, schema, instance, True)


def from_strict_instance(schema: dict[str, Any], instance: Any) -> Any:
    """A strict-mode call mapped back to ``schema``: ``null`` for an optional, non-nullable
    property means the model left it out."""
    return _map(schema, schema, instance, False)
