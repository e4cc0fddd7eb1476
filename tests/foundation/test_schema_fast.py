"""The validator's fast accept (jsonschema-rs for plain schemas) never changes a verdict."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolctl.schema import _fast_accept, make_validator

PLAIN: dict[str, Any] = {
    "type": "object",
    "properties": {
        "n": {"type": "integer", "minimum": 0, "maximum": 10},
        "x": {"type": "number", "exclusiveMaximum": 1.5},
        "s": {"type": "string", "minLength": 1, "maxLength": 3},
        "flag": {"type": "boolean"},
        "tags": {"type": "array", "items": {"enum": ["a", "b", 1]}, "maxItems": 2},
        "pair": {"prefixItems": [{"type": "string"}, {"const": 0}]},
        "either": {"anyOf": [{"type": "null"}, {"type": "string"}]},
        "one": {"oneOf": [{"type": "integer"}, {"type": "number", "minimum": 5}]},
        "secret": {"type": "string", "x-sensitive": True, "writeOnly": True},
    },
    "required": ["n"],
    "additionalProperties": False,
}

EDGES: list[Any] = [
    {"n": 1},
    {"n": True},  # a boolean is not an integer
    {"n": 1.0},  # but 1.0 is
    {"n": 2**70},
    {"n": 11},
    {"n": 1, "x": 1.5},
    {"n": 1, "s": ""},
    {"n": 1, "s": "\U0001f600\U0001f600\U0001f600"},  # three code points
    {"n": 1, "s": "\ud800"},  # a lone surrogate
    {"n": 1, "tags": ["a", 1]},
    {"n": 1, "tags": [True]},  # True is not 1 in an enum
    {"n": 1, "tags": [1.0]},
    {"n": 1, "pair": ["x", 0.0]},
    {"n": 1, "pair": ["x", False]},
    {"n": 1, "one": 7},  # both branches: oneOf fails
    {"n": 1, "one": 7.5},
    {"n": 1, "either": None},
    {"n": 1, "extra": 1},
    {"n": 1, "flag": 0},
    [],
    None,
]


def _python_only(schema: Any, value: Any) -> list[Any]:
    validator = make_validator(schema)
    validator._fast = None
    return validator.errors(value)


@pytest.mark.parametrize("value", EDGES)
def test_same_verdict_as_python_jsonschema(value: Any) -> None:
    assert make_validator(PLAIN).errors(value) == _python_only(PLAIN, value)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner),
    max_leaves=8,
)
objects = st.fixed_dictionaries(
    {"n": json_values},
    optional=dict.fromkeys(("x", "s", "flag", "tags", "pair", "either", "one"), json_values),
)


@settings(max_examples=300, deadline=None)
@given(objects | json_values)
def test_same_verdict_on_generated_values(value: Any) -> None:
    assert make_validator(PLAIN).errors(value) == _python_only(PLAIN, value)


@pytest.mark.parametrize(
    "schema",
    [
        {"type": "string", "format": "email"},
        {"type": "string", "pattern": "^a"},
        {"properties": {"a": {"$ref": "#/$defs/x"}}, "$defs": {"x": {}}},
        {"type": "number", "multipleOf": 0.1},
        {"type": "array", "uniqueItems": True},
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"},
    ],
)
def test_other_schemas_are_checked_by_python_jsonschema_only(schema: dict[str, Any]) -> None:
    assert _fast_accept(schema) is None


def test_a_plain_schema_gets_the_fast_accept() -> None:
    assert _fast_accept(PLAIN) is not None
    assert _fast_accept({"$schema": "https://json-schema.org/draft/2020-12/schema"}) is not None


def test_the_validator_cache_keeps_the_recently_used_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """A load checks every tool's examples once: the process-wide cache must not keep a
    validator per tool for the rest of the command (a fifth of a large validate's memory)."""
    from toolctl import schema

    schema.forget_validators()
    monkeypatch.setattr(schema, "CACHED_VALIDATORS", 8)
    first = schema.cached_validator({"type": "string", "maxLength": 0})
    for n in range(1, 20):
        schema.cached_validator({"type": "string", "maxLength": n})
        assert schema.cached_validator({"type": "string", "maxLength": 0}) is first  # in use
    assert schema.forget_validators() == 8
    assert not schema.cached_validator({"type": "string", "maxLength": 0}).is_valid("x")
    assert schema.cached_validator({"type": "string", "maxLength": 1}) is not None
