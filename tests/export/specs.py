"""Build ToolSpec objects in memory for unit tests (the loader is exercised by the fixtures)."""

from __future__ import annotations

from typing import Any

from toolctl.diagnostics import Location
from toolctl.spec import Origin, ToolSpec


def make_spec(name: str = "tool", description: str = "A tool.", **raw: Any) -> ToolSpec:
    """A spec as the loader would build it from ``{name, description, **raw}``."""
    data = {"name": name, "description": description, **raw}
    return ToolSpec.from_validated(
        data, origin=Origin("file", "", "t.yaml"), location=Location("t.yaml", 1, 1)
    )


def obj(properties: dict[str, Any], required: list[str] | None = None, **more: Any) -> dict:
    """A ``type: object`` schema."""
    schema: dict[str, Any] = {"type": "object", "properties": properties}
    if required is not None:
        schema["required"] = required
    return {**schema, **more}
