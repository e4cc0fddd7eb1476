"""Property: for any (meta-valid) schema, generation returns checked values or says it cannot."""

from __future__ import annotations

import random
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from toolctl.schema import check_schema, make_validator
from toolctl.testing.gen import Unsatisfiable, ValueGenerator
from toolctl.testing.mutate import invalid

SCALARS = st.sampled_from(["string", "integer", "number", "boolean", "null"])
NUMBER = st.integers(-50, 50) | st.floats(-50, 50, allow_nan=False, width=32)


def _scalar() -> st.SearchStrategy[dict[str, Any]]:
    base = st.fixed_dictionaries(
        {"type": SCALARS | st.lists(SCALARS, min_size=1, max_size=3, unique=True)}
    )
    extras = st.fixed_dictionaries(
        {},
        optional={
            "minimum": NUMBER,
            "maximum": NUMBER,
            "exclusiveMinimum": NUMBER,
            "multipleOf": st.sampled_from([1, 2, 0.5, 3]),
            "minLength": st.integers(0, 5),
            "maxLength": st.integers(0, 8),
            "pattern": st.sampled_from(["^[a-z]+$", "^\\d{2,4}$", "x", "^(ab|cd)*$", "^[^\\s]+$"]),
            "format": st.sampled_from(["date", "email", "uuid", "ipv4", "uri", "date-time"]),
            "enum": st.lists(
                st.integers(0, 3) | st.text(max_size=3), min_size=1, max_size=4, unique=True
            ),
            "nullable": st.booleans(),
        },
    )
    return st.builds(lambda a, b: {**a, **b}, base, extras)


SCHEMAS = st.recursive(
    _scalar(),
    lambda inner: st.one_of(
        st.builds(
            lambda props, req, extra: {
                "type": "object",
                "properties": props,
                "required": [k for k in props if k in req],
                "additionalProperties": extra,
            },
            st.dictionaries(st.sampled_from(list("abcde")), inner, max_size=4),
            st.sets(st.sampled_from(list("abcde"))),
            st.booleans(),
        ),
        st.builds(
            lambda items, lo, unique: {
                "type": "array",
                "items": items,
                "minItems": lo,
                "maxItems": lo + 3,
                "uniqueItems": unique,
            },
            inner,
            st.integers(0, 2),
            st.booleans(),
        ),
        st.builds(lambda branches: {"anyOf": branches}, st.lists(inner, min_size=1, max_size=3)),
    ),
    max_leaves=8,
)


@settings(max_examples=150, deadline=None, derandomize=True)
@given(prop=SCHEMAS, seed=st.integers(0, 2**16))
def test_generation_never_crashes_and_is_checked(prop: dict[str, Any], seed: int) -> None:
    schema = {"type": "object", "properties": {"x": prop}, "required": ["x"]}
    if check_schema(schema):
        return
    gen = ValueGenerator(schema, random.Random(seed))
    validator = make_validator(schema)
    try:
        value = gen.valid(tries=5)
    except Unsatisfiable:
        return
    assert validator.is_valid(value)
    try:
        broken, _ = invalid(gen, value, tries=2)
    except Unsatisfiable:
        return
    assert not validator.is_valid(broken)
