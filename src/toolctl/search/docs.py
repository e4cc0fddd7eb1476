"""A tool's searchable fields, from its declaration: name, description, parameters, toolset."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

MAX_DEPTH = 4  # nested parameter objects read this deep; deeper ones say little of the tool


def _properties(schema: Any, depth: int = 0) -> Iterator[tuple[str, str]]:
    if not isinstance(schema, Mapping) or depth > MAX_DEPTH:
        return
    props = schema.get("properties")
    if isinstance(props, Mapping):
        for name, sub in props.items():
            text = sub.get("description", "") if isinstance(sub, Mapping) else ""
            yield str(name), text if isinstance(text, str) else ""
            yield from _properties(sub, depth + 1)
    items = schema.get("items")
    if isinstance(items, Mapping):
        yield from _properties(items, depth + 1)


def tool_fields(
    name: str,
    description: str | None,
    input_schema: Any,
    toolset_description: str | None = None,
    title: str | None = None,
) -> dict[str, str]:
    """The fields a tool is searched by (see toolctl.search.lexical.WEIGHTS)."""
    params = list(_properties(input_schema))
    return {
        "name": f"{name} {title or ''}".strip(),
        "description": description or "",
        "parameters": " ".join(f"{n} {d}" for n, d in params),
        "toolset": toolset_description or "",
    }
