"""The walk of a value (``schema.walk_accepts``, how a load settles input examples without
compiling anything) decides exactly as python-jsonschema, or not at all."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolctl.schema import (
    _WALK_KEYWORDS,
    _WALK_REFUSED,
    WALK_STEPS,
    _Undecided,
    _Walk,
    make_validator,
    walk_accepts,
)

from .test_schema_fast import (
    EDGES,
    MORE,
    MORE_EDGES,
    PLAIN,
    RICH,
    RICH_EDGES,
    TREE,
    TREE_EDGES,
    json_values,
)


def _python_valid(schema: Any, value: Any) -> bool:
    validator = make_validator(schema)
    validator._fast = None  # python-jsonschema alone
    return not validator.errors(value)


def _verdict(schema: Any, value: Any) -> bool | None:
    """The walk's own verdict: True valid, False invalid, None undecided."""
    try:
        return _Walk(schema, schema.get("$defs", {})).valid(schema, value, 0)
    except Exception:
        return None


def _agrees(schema: Any, value: Any) -> bool | None:
    verdict = _verdict(schema, value)
    valid = _python_valid(schema, value)
    assert verdict is None or verdict == valid, (schema, value)  # an invalid value too
    assert walk_accepts(schema, [value]) == (verdict is True)
    return verdict


CASES = (
    [(PLAIN, value) for value in EDGES]
    + [(RICH, value) for value in RICH_EDGES]
    + [(MORE, value) for value in MORE_EDGES]
    + [(TREE, value) for value in TREE_EDGES]
)


@pytest.mark.parametrize(("schema", "value"), CASES)
def test_same_verdict_as_python_jsonschema_on_the_fast_paths_edges(schema: Any, value: Any) -> None:
    _agrees(schema, value)


def test_the_walk_decides_the_plain_cases() -> None:
    """Not a walk that says "undecided" to everything: each plain edge gets a verdict, but
    the values nested deeper than it follows (100 levels of a tree) and a number past a
    float's range under multipleOf (python-jsonschema's arithmetic overflows)."""
    undecided = [(s, v) for s, v in CASES if _verdict(s, v) is None]
    assert [v for s, v in undecided if s is MORE] == [{"big": 10**400, "step": 1}]
    assert all(s is MORE or (s is TREE and "next" in v) for s, v in undecided)
    assert len(undecided) <= 4


# What a negation turns around: an equality, a type or a count judged wrong would accept a
# value python-jsonschema rejects.
TRICKY: list[tuple[Any, list[Any]]] = [
    ({"not": {"const": 1}}, [1, 1.0, True, "1", [1], None]),
    (
        {"not": {"enum": [0, [1, {"a": True}], {"b": [1.0]}]}},
        [False, 0.0, [1, {"a": 1}], [1.0, {"a": True}], {"b": [1]}, {"b": [True]}],
    ),
    ({"not": {"type": "integer"}}, [1, 1.0, 1.5, True, 2**80, float("inf")]),
    ({"not": {"type": ["number", "null"]}}, [1, None, False, "x"]),
    ({"not": {"uniqueItems": True}}, [[1, 1.0], [1, True], [{"a": 1}, {"a": 1.0}], [[0], [False]]]),
    ({"not": {"multipleOf": 0.1}}, [0.3, 0.7, 3, 10**30, True]),
    ({"not": {"maxLength": 2}}, ["ab", "abc", "\U0001f600\U0001f600", 123]),
    ({"not": {"pattern": "^a$"}}, ["a", "a\n", "ba", 1]),
    ({"not": {"format": "date"}}, ["2026-12-02", "2026-02-30", 5]),
    ({"oneOf": [{"minimum": 0}, {"multipleOf": 2}]}, [1, 2, -2, -1, "x"]),
    ({"not": {"anyOf": [{"type": "string"}, {"minimum": 3}]}}, ["x", 3, 2, None]),
    ({"if": {"minimum": 0}, "then": {"multipleOf": 2}, "else": {"const": -1}}, [2, 3, -1, -2, "x"]),
    ({"then": {"const": 1}}, [2]),  # then without if: python-jsonschema ignores it
    ({"contains": {"type": "string"}, "minContains": 0, "maxContains": 1}, [[], [1], ["a", "b"]]),
    ({"minContains": 2}, [[1]]),  # without contains: ignored
    ({"prefixItems": [{"type": "string"}], "items": False}, [["a"], ["a", 1], [], [1]]),
    ({"additionalProperties": False, "properties": {"a": {}}}, [{"a": 1}, {"a": 1, "b": 2}, []]),
    ({"additionalProperties": {"type": "string"}}, [{"a": "x"}, {"a": 1}]),
    ({"propertyNames": {"maxLength": 1}}, [{"a": 1}, {"ab": 1}, {}]),
    ({"dependentRequired": {"a": ["b"]}}, [{"a": 1}, {"a": 1, "b": 2}, {"b": 1}]),
    ({"dependentSchemas": {"a": {"required": ["b"]}}}, [{"a": 1}, {"a": 1, "b": 2}]),
    ({"not": {"required": ["a"]}}, [{"a": 1}, {}, "a"]),
    ({"minProperties": 1, "maxItems": 1, "exclusiveMinimum": 0}, [{}, [1, 2], 0, 0.5, {"a": 1}]),
    # keywords python-jsonschema does not know are ignored by both (OpenAPI's, misspellings)
    ({"type": "string", "nullable": True, "example": 1, "maxlength": 1}, ["abc", None]),
    ({"x-anything": {"type": "integer"}, "title": "t", "$comment": "c"}, ["x", 1]),
    (True, [1, None]),
]


@pytest.mark.parametrize(("schema", "values"), TRICKY)
def test_same_verdict_as_python_jsonschema_where_a_negation_turns_it(
    schema: Any, values: list[Any]
) -> None:
    if schema is True:
        assert walk_accepts(schema, values) is False  # only a mapping is walked
        return
    decided = [_agrees(schema, value) for value in values]
    assert None not in decided


@pytest.mark.parametrize(
    "schema",
    [
        {"patternProperties": {"^a": {"type": "string"}}},
        {"unevaluatedProperties": False},
        {"properties": {"a": {"$id": "https://example.com/a", "type": "string"}}},
        {"properties": {"a": {"$anchor": "a"}}},
        {"properties": {"a": {"$defs": {}}}},  # $defs below the top
        {"$dynamicRef": "#meta"},
        {"$ref": "#"},
        {"$ref": "#/$defs/missing"},
        {"$ref": "other.schema.yaml#/$defs/x"},
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object"},
        {"$id": "https://example.com/root", "type": "object"},
        {"type": "object", 1: {}},
    ],
)
def test_what_the_walk_does_not_judge_is_left_to_the_validators(schema: dict[Any, Any]) -> None:
    assert walk_accepts(schema, [{"a": "x"}]) is False


def test_only_the_keywords_it_does_not_evaluate_are_refused() -> None:
    """Every keyword python-jsonschema evaluates for 2020-12 is either walked or refused: one
    a later version adds would otherwise be ignored by the walk and not by the validators."""
    from jsonschema import Draft202012Validator

    known = set(Draft202012Validator.VALIDATORS)
    assert set(_WALK_KEYWORDS) | _WALK_REFUSED == known


def test_a_pattern_that_cannot_be_evaluated_is_never_accepted() -> None:
    """python-jsonschema walks an ``anyOf`` branch whole: a pattern it cannot evaluate there
    refuses the value although the branch already failed, and the walk, which evaluates
    every keyword it meets, leaves it to python-jsonschema."""
    schema = {"anyOf": [{"type": "integer", "pattern": "("}, {"type": "string"}]}
    validator = make_validator(schema)
    validator._fast = None
    assert [p.keyword for p in validator.errors("x")] == ["refused"]
    assert walk_accepts(schema, ["x"]) is False
    # under a `not`, python-jsonschema stops at the first error: the walk still decides nothing
    negated = {"not": {"type": "integer", "pattern": "("}}
    assert _python_valid(negated, "x") and walk_accepts(negated, ["x"]) is False


def test_endless_and_exponential_walks_give_up() -> None:
    loop = {
        "$ref": "#/$defs/a",
        "$defs": {"a": {"anyOf": [{"$ref": "#/$defs/b"}]}, "b": {"allOf": [{"$ref": "#/$defs/a"}]}},
    }
    assert walk_accepts(loop, [1]) is False
    # each level's first branch fails only at the bottom: 2**40 visits without a bound
    both = {"type": "object", "properties": {"x": {"$ref": "#/$defs/n"}}}
    tree = {"$ref": "#/$defs/n", "$defs": {"n": {"anyOf": [{**both, "required": ["y"]}, both]}}}
    value: Any = {}
    for _ in range(40):
        value = {"x": value}
    walk = _Walk(tree, tree["$defs"])
    with pytest.raises(_Undecided):
        walk.valid(tree, value, 0)
    assert walk.steps < 0 < WALK_STEPS  # it stopped at the bound, not at the value's end
    assert walk_accepts(tree, [value]) is False


# Generated schemas over the keywords the walk evaluates, and generated values: where the walk
# decides, it decides as python-jsonschema.
_LEAF_SCHEMAS = st.one_of(
    st.booleans(),
    st.fixed_dictionaries(
        {"type": st.sampled_from(["string", "integer", "number", "object", "array", "null"])}
    ),
    st.fixed_dictionaries({"const": json_values}),
    st.fixed_dictionaries({"enum": st.lists(json_values, min_size=1, max_size=3)}),
    st.fixed_dictionaries({"minimum": st.integers(-2, 2) | st.floats(-2, 2)}),
    st.fixed_dictionaries({"exclusiveMaximum": st.integers(-2, 2)}),
    st.fixed_dictionaries({"maxLength": st.integers(0, 3)}),
    st.fixed_dictionaries({"minItems": st.integers(0, 2)}),
    st.fixed_dictionaries({"maxProperties": st.integers(0, 2)}),
    st.fixed_dictionaries({"pattern": st.sampled_from(["^a", "b$", "^\\d+$", "[A-Z]"])}),
    st.fixed_dictionaries({"format": st.sampled_from(["date", "email", "uri", "ipv4", "x"])}),
    st.fixed_dictionaries({"uniqueItems": st.booleans()}),
    st.fixed_dictionaries({"multipleOf": st.sampled_from([2, 0.5, 0.1, 3])}),
    st.fixed_dictionaries({"required": st.lists(st.sampled_from(["a", "b", ""]), max_size=2)}),
    st.fixed_dictionaries(
        {"dependentRequired": st.dictionaries(st.sampled_from(["a", "b"]), st.just(["b"]))}
    ),
    st.just({"$ref": "#/$defs/d"}),
)


def _compound(inner: Any) -> Any:
    names = st.sampled_from(["a", "b", ""])
    return st.one_of(
        st.dictionaries(names, inner, max_size=2).map(lambda p: {"properties": p}),
        st.fixed_dictionaries(
            {"properties": st.dictionaries(names, inner, max_size=2), "additionalProperties": inner}
        ),
        st.fixed_dictionaries({"items": inner}),
        st.fixed_dictionaries({"prefixItems": st.lists(inner, max_size=2), "items": inner}),
        st.fixed_dictionaries({"contains": inner}, optional={"minContains": st.integers(0, 2)}),
        st.fixed_dictionaries({"propertyNames": inner}),
        st.fixed_dictionaries({"dependentSchemas": st.dictionaries(names, inner, max_size=2)}),
        st.lists(inner, min_size=1, max_size=3).map(lambda s: {"anyOf": s}),
        st.lists(inner, min_size=1, max_size=3).map(lambda s: {"oneOf": s}),
        st.lists(inner, min_size=1, max_size=3).map(lambda s: {"allOf": s}),
        inner.map(lambda s: {"not": s}),
        st.fixed_dictionaries({"if": inner}, optional={"then": inner, "else": inner}),
        st.tuples(inner, inner).map(
            lambda pair: {**pair[0], **pair[1]} if all(isinstance(p, dict) for p in pair) else True
        ),
    )


_GENERATED = st.recursive(_LEAF_SCHEMAS, _compound, max_leaves=8)
_DEFINITION = st.one_of(
    _LEAF_SCHEMAS.filter(lambda s: s != {"$ref": "#/$defs/d"}),
    st.just({"type": "object", "properties": {"a": {"$ref": "#/$defs/d"}}}),
)


@settings(max_examples=600, deadline=None)
@given(_GENERATED, _DEFINITION, json_values)
def test_same_verdict_on_generated_schemas_and_values(
    schema: Any, definition: Any, value: Any
) -> None:
    if not isinstance(schema, dict):
        schema = {"allOf": [schema]}
    schema = {**schema, "$defs": {"d": definition}}
    _agrees(schema, value)


@pytest.mark.parametrize(("schema", "value"), [("int", 1), ("float", 1.5), (["null", "int"], 1)])
def test_a_type_python_jsonschema_does_not_know_is_undecided(schema: Any, value: Any) -> None:
    assert walk_accepts({"type": schema}, [value]) is False
