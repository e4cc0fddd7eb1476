"""Valid and invalid values generated from JSON Schemas; shrinking."""

from __future__ import annotations

import asyncio
import random
from typing import Any

import pytest

from toolctl.schema import enforced_formats, make_validator
from toolctl.testing.gen import Unsatisfiable, ValueGenerator
from toolctl.testing.mutate import invalid
from toolctl.testing.shrink import shrink

SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["city", "where", "kind"],
    "additionalProperties": False,
    "properties": {
        "city": {"type": "string", "minLength": 1, "pattern": "^[A-Z][a-z]+( [A-Z][a-z]+)*$"},
        "units": {"enum": ["metric", "imperial"]},
        "day": {"type": "string", "format": "date"},
        "id": {"type": "string", "format": "uuid"},
        "mail": {"type": "string", "format": "email"},
        "days": {"type": ["integer", "null"], "minimum": 1, "maximum": 14},
        "ratio": {"type": "number", "exclusiveMinimum": 0, "maximum": 1, "nullable": True},
        "where": {"$ref": "#/$defs/point"},
        "tags": {
            "type": "array",
            "items": {"type": "string", "maxLength": 5},
            "maxItems": 3,
            "uniqueItems": True,
        },
        "kind": {"oneOf": [{"const": "a"}, {"type": "integer", "multipleOf": 5}]},
    },
    "$defs": {
        "point": {
            "type": "object",
            "required": ["lat", "lon"],
            "additionalProperties": False,
            "properties": {
                "lat": {"type": "number", "minimum": -90, "maximum": 90},
                "lon": {"type": "number", "minimum": -180, "maximum": 180},
            },
        },
    },
}


def test_generated_values_are_valid_and_varied() -> None:
    gen = ValueGenerator(SCHEMA, random.Random(7))
    validator = make_validator(SCHEMA)
    values = [gen.valid() for _ in range(60)]
    assert all(validator.is_valid(v) for v in values)
    seen_keys = set().union(*values)
    assert {"units", "day", "id", "mail", "days", "ratio", "tags"} <= seen_keys
    assert any(v.get("days") is None for v in values if "days" in v)


def test_generation_is_reproducible_by_seed() -> None:
    first = [ValueGenerator(SCHEMA, random.Random(3)).valid() for _ in range(3)]
    again = [ValueGenerator(SCHEMA, random.Random(3)).valid() for _ in range(3)]
    assert first == again


def test_invalid_values_break_one_thing() -> None:
    gen = ValueGenerator(SCHEMA, random.Random(11))
    validator = make_validator(SCHEMA)
    whats = set()
    for _ in range(60):
        value, mutation = invalid(gen, gen.valid())
        assert not validator.is_valid(value)
        assert isinstance(value, dict)
        whats.add(mutation.what)
    assert {"required key missing", "unknown key", "value outside enum/const"} <= whats


def test_unsatisfiable_schema_says_so() -> None:
    gen = ValueGenerator(
        {"type": "object", "properties": {"x": False}, "required": ["x"]}, random.Random(1)
    )
    with pytest.raises(Unsatisfiable):
        gen.valid()


def test_shrink_finds_a_minimal_failing_value() -> None:
    async def fails(value: Any) -> bool:
        return any(isinstance(v, int) and v > 9 for v in value.get("nums", []))

    start = {"name": "something long", "nums": [3, 250, 7, 12], "flag": True}
    small, calls = asyncio.run(shrink(start, fails, lambda v: isinstance(v, dict)))
    assert small == {"nums": [10]}
    assert 0 < calls <= 150


ZOO: dict[str, dict[str, Any]] = {
    "nullable via anyOf and $ref": {
        "type": "object",
        "properties": {"p": {"anyOf": [{"$ref": "#/$defs/pt"}, {"type": "null"}]}},
        "required": ["p"],
        "$defs": {
            "pt": {"type": "object", "properties": {"x": {"type": "integer"}}, "required": ["x"]}
        },
    },
    "escaped and percent-encoded $ref": {
        "type": "object",
        "properties": {"a": {"$ref": "#/$defs/a%20b"}, "b": {"$ref": "#/$defs/x~1y"}},
        "required": ["a", "b"],
        "$defs": {"a b": {"type": "integer", "minimum": 3}, "x/y": {"const": "slash"}},
    },
    "oneOf objects": {
        "type": "object",
        "required": ["shape"],
        "properties": {
            "shape": {
                "oneOf": [
                    {
                        "type": "object",
                        "properties": {
                            "kind": {"const": "circle"},
                            "r": {"type": "number", "exclusiveMinimum": 0},
                        },
                        "required": ["kind", "r"],
                        "additionalProperties": False,
                    },
                    {
                        "type": "object",
                        "properties": {
                            "kind": {"const": "square"},
                            "side": {"type": "number", "minimum": 0},
                        },
                        "required": ["kind", "side"],
                        "additionalProperties": False,
                    },
                ]
            }
        },
    },
    "recursive $ref": {
        "type": "object",
        "properties": {"tree": {"$ref": "#/$defs/node"}},
        "required": ["tree"],
        "$defs": {
            "node": {
                "type": "object",
                "required": ["v"],
                "properties": {
                    "v": {"type": "integer"},
                    "kids": {"type": "array", "items": {"$ref": "#/$defs/node"}, "maxItems": 2},
                },
            }
        },
    },
    "allOf with $ref": {
        "allOf": [
            {"$ref": "#/$defs/base"},
            {"properties": {"extra": {"type": "integer"}}, "required": ["extra"]},
        ],
        "type": "object",
        "$defs": {
            "base": {
                "type": "object",
                "properties": {"id": {"type": "string", "format": "uuid"}},
                "required": ["id"],
            }
        },
    },
    "formats": {
        "type": "object",
        "properties": {
            k: {"type": "string", "format": k}
            for k in sorted(enforced_formats())  # every format the validator checks
        },
        "required": sorted(enforced_formats()),
    },
    "tuple and unique enum items": {
        "type": "object",
        "properties": {
            "t": {
                "type": "array",
                "prefixItems": [{"type": "string"}, {"type": "integer"}],
                "items": False,
                "minItems": 2,
            },
            "tags": {
                "type": "array",
                "items": {"enum": ["a", "b", "c"]},
                "uniqueItems": True,
                "minItems": 2,
            },
        },
        "required": ["t", "tags"],
    },
    "dependentRequired and exact length": {
        "type": "object",
        "properties": {
            "card": {"type": "string", "minLength": 4, "maxLength": 4},
            "cvv": {"type": "string", "pattern": "^[0-9]{3}$"},
        },
        "dependentRequired": {"card": ["cvv"]},
        "minProperties": 1,
    },
    "OpenAPI nullable": {
        "type": "object",
        "properties": {"n": {"type": "string", "nullable": True}},
        "required": ["n"],
    },
}


@pytest.mark.parametrize("name", list(ZOO))
def test_generator_handles_schema_shapes(name: str) -> None:
    schema = ZOO[name]
    gen = ValueGenerator(schema, random.Random(name))
    validator = make_validator(schema)
    for _ in range(20):
        value = gen.valid()
        assert validator.is_valid(value)
        broken, _mutation = invalid(gen, value)
        assert not validator.is_valid(broken)
