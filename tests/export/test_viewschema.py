"""The schema of a transformed output view (what MCP lists for a background tool)."""

from __future__ import annotations

from typing import Any

import pytest

from toolctl.export.viewschema import view_schema
from toolctl.runtime.pipeline.transforms import apply_declarative
from toolctl.schema import make_validator

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "a": {"type": "integer"},
        "b": {"type": "object", "properties": {"c": {"type": "string"}, "d": {"type": "integer"}},
              "required": ["c", "d"]},
        "rows": {"type": "array", "items": {"type": "object", "properties": {
            "x": {"type": "integer"}, "y": {"type": "integer"}}, "required": ["x", "y"]}},
    },
    "required": ["a", "b", "rows"],
    "additionalProperties": False,
}  # fmt: skip
OUTPUT = {"a": 1, "b": {"c": "s", "d": 2}, "rows": [{"x": 1, "y": 2}]}


@pytest.mark.parametrize(
    "transform",
    [
        {"pick": ["a", "b.c"]},
        {"omit": ["b", "rows.y"]},
        {"omit": ["a"], "redact": ["b.d"]},
        {"pick": ["rows.x"]},
    ],
)
def test_the_view_of_a_valid_output_is_valid_against_the_view_schema(
    transform: dict[str, Any],
) -> None:
    schema = view_schema(transform, SCHEMA)
    view = apply_declarative(transform, OUTPUT)
    assert make_validator(schema).errors(view) == []
    # and the view would break the declared schema: the edit really was needed
    assert make_validator(SCHEMA).errors(view) != []


@pytest.mark.parametrize(
    "transform", [{"template": "{a}"}, {"call": "m:f"}, {"suppress": True}, {"omit": ["rows.0"]}]
)
def test_a_view_no_schema_predicts_has_none(transform: dict[str, Any]) -> None:
    assert view_schema(transform, SCHEMA) is None


def test_a_path_through_a_reference_has_none() -> None:
    schema = {"type": "object", "properties": {"a": {"$ref": "#/$defs/A"}}, "$defs": {"A": {}}}
    assert view_schema({"omit": ["a.b"]}, schema) is None
    assert view_schema({"omit": ["a"]}, schema) == {"type": "object", "properties": {},
                                                    "$defs": {"A": {}}}  # fmt: skip
