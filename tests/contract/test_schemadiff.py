"""``schemadiff.compare`` on cases the corpus does not spell out."""

from __future__ import annotations

from typing import Any

import pytest

from toolctl.contract.schemadiff import Effect, compare


def effects(old: Any, new: Any) -> set[str]:
    return {c.effect.value for c in compare(old, new)}


@pytest.mark.parametrize(
    ("old", "new", "expected"),
    [
        # draft-04 boolean exclusive bounds: read together with minimum, so not decided here
        (
            {"minimum": 5, "exclusiveMinimum": True},
            {"minimum": 5, "exclusiveMinimum": False},
            {"unknown"},
        ),
        ({"minimum": 5}, {"minimum": 5.0}, set()),  # the same bound written another way
        ({"minimum": 5}, {"minimum": 5, "exclusiveMinimum": 4}, set()),  # implied already
        ({"type": "integer"}, {"type": "number"}, {"widens"}),
        ({"type": ["string", "null"]}, {"type": "string"}, {"narrows"}),
        ({"enum": [1]}, {"enum": [True]}, {"narrows", "widens"}),  # 1 and true differ in JSON
        ({"not": {"const": 1}}, {"not": {"enum": [1, 2]}}, {"narrows"}),  # roles reversed
        (True, False, {"narrows"}),
        (False, {"type": "string"}, {"widens"}),
        (
            {"items": {"type": "string"}},
            {"prefixItems": [{"type": "string"}], "items": {"type": "string"}},
            set(),
        ),
        (
            {"prefixItems": [{"type": "string"}]},
            {"prefixItems": [{"type": "string"}], "items": False},
            {"narrows"},
        ),
        ({"contains": {"type": "string"}}, {"contains": {"type": ["string", "null"]}}, {"widens"}),
        (
            {"contains": {"type": "string"}, "maxContains": 2},
            {"contains": {"type": ["string", "null"]}, "maxContains": 2},
            {"unknown"},
        ),
        ({"$schema": "http://json-schema.org/draft-07/schema#"}, {}, {"unknown"}),
        ({"description": "a"}, {"description": "b"}, {"text"}),
        ({"x-internal": 1}, {"x-internal": 2}, {"text"}),  # not validated: no value changes
    ],
)
def test_effects(old: Any, new: Any, expected: set[str]) -> None:
    assert effects(old, new) == expected


def test_a_changed_ref_target_is_found_through_an_unchanged_ref() -> None:
    def schema(limit: int) -> dict[str, Any]:
        return {
            "type": "object",
            "properties": {"a": {"$ref": "#/$defs/A"}},
            "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"type": "string", "maxLength": limit}},
        }

    (change,) = compare(schema(10), schema(5))
    assert change.effect is Effect.NARROWS
    assert change.place == "a" and change.detail == "maxLength 10 → 5"


def test_recursive_schemas_terminate_and_find_deep_changes() -> None:
    def tree(kind: str) -> dict[str, Any]:
        return {
            "$ref": "#/$defs/Node",
            "$defs": {
                "Node": {
                    "type": "object",
                    "properties": {
                        "value": {"type": kind},
                        "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                    },
                }
            },
        }

    found = compare(tree("integer"), tree("number"))
    assert [(c.effect, c.place) for c in found] == [(Effect.WIDENS, "value")]


def test_undeclared_property_rule() -> None:
    open_old = {"type": "object", "properties": {"a": {}}}
    open_new = {"type": "object", "properties": {"a": {}, "b": {"type": "string"}}}
    assert effects(open_old, open_new) == {"undeclared"}
    closed_old = {**open_old, "additionalProperties": False}
    closed_new = {**open_new, "additionalProperties": False}
    assert effects(closed_old, closed_new) == {"widens"}
    assert effects(closed_new, closed_old) == {"narrows"}
    assert effects(open_new, open_old) == {"widens"}  # b is no longer checked


@pytest.mark.parametrize(
    ("old", "new", "text"),
    [
        ({"maximum": 100}, {"maximum": 20}, "upper bound ≤100 → ≤20"),
        ({"exclusiveMaximum": 10}, {"maximum": 10}, "upper bound <10 → ≤10"),
        ({"minimum": 1}, {"exclusiveMinimum": 1}, "lower bound ≥1 → >1"),
        ({}, {"maximum": 5}, "upper bound none → ≤5"),
    ],
)
def test_bounds_read_the_way_they_point(
    old: dict[str, Any], new: dict[str, Any], text: str
) -> None:
    # an upper bound is an at-most: `maximum: 100 → 20` must not read as ≥100 → ≥20
    details = [c.detail for c in compare({"type": "integer", **old}, {"type": "integer", **new})]
    assert details == [text]
