"""The validator's fast accept (jsonschema-rs for plain schemas) never changes a verdict."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolctl.schema import (
    _DESCENDING,
    _FAST_KEYWORDS,
    _ONE_SUBSCHEMA,
    _OWN_KEYWORDS,
    _SUBSCHEMA_LISTS,
    _fast_accept,
    _own_keyword,
    _Plain,
    _plain,
    make_validator,
)

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
        {"$schema": "http://json-schema.org/draft-07/schema#", "type": "string"},
        {"$ref": "#"},  # an endless cycle: jsonschema-rs would recurse without end
        {"$ref": "#/$defs/a", "$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}},
        # endless loops that never move into the value, through keywords applied to it
        {
            "$ref": "#/$defs/a",
            "$defs": {
                "a": {"anyOf": [{"$ref": "#/$defs/b"}]},
                "b": {"allOf": [{"$ref": "#/$defs/a"}]},
            },
        },
        {"$ref": "#/$defs/a", "$defs": {"a": {"if": {"$ref": "#/$defs/a"}}}},
        {"$ref": "#/$defs/a", "$defs": {"a": {"dependentSchemas": {"x": {"$ref": "#/$defs/a"}}}}},
        {"$ref": "#/$defs/missing"},
        {"$ref": "other.schema.yaml#/$defs/x"},  # never retrieved: python-jsonschema refuses it
        {"$ref": "https://example.com/s.json"},
        {"patternProperties": {"^a": {"type": "string"}}},
        {"properties": {"a": {"$defs": {"x": {}}}}},  # $defs below the top
    ],
)
def test_other_schemas_are_checked_by_python_jsonschema_only(schema: dict[str, Any]) -> None:
    assert _fast_accept(schema) is None


def test_a_plain_schema_gets_the_fast_accept() -> None:
    assert _fast_accept(PLAIN) is not None
    assert _fast_accept({"$schema": "https://json-schema.org/draft/2020-12/schema"}) is not None
    assert _fast_accept(RICH) is not None


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


# What real registries hold: references to shared definitions, formats, patterns and
# uniqueItems. jsonschema-rs evaluates these with toolctl's own code, so the verdicts agree.
RICH: dict[str, Any] = {
    "type": "object",
    "properties": {
        "id": {"$ref": "#/$defs/Id"},
        "email": {"type": "string", "format": "email"},
        "when": {"format": "date-time"},
        "tags": {"type": "array", "uniqueItems": True},
        "place": {"$ref": "#/$defs/Place"},
    },
    "required": ["id"],
    "$defs": {
        "Id": {"type": "string", "pattern": "^[a-z]{2}_\\d+$", "maxLength": 8},
        "Country": {"type": "string", "pattern": "^[A-Z]{2}$"},
        "Place": {"properties": {"country": {"$ref": "#/$defs/Country"}}},
    },
}

RICH_EDGES: list[Any] = [
    {"id": "ab_12"},
    {"id": "ab_12\n"},  # `$` matches only at the very end (ECMA), not before a newline
    {"id": "ab_\u0661"},  # \d is ASCII only: an Arabic-Indic digit is not one
    {"id": "ab_123456"},  # the pattern matches, maxLength does not
    {"id": 12},
    {"id": "ab_1", "email": "ada@example.com"},
    {"id": "ab_1", "email": "not an address"},
    {"id": "ab_1", "when": "2026-12-01T20:15:00Z"},
    {"id": "ab_1", "when": "2026-13-01T20:15:00Z"},
    {"id": "ab_1", "when": 7},  # a format says nothing about other types
    {"id": "ab_1", "tags": [1, 1.0]},  # equal JSON numbers
    {"id": "ab_1", "tags": [1, True]},  # true is not 1
    {"id": "ab_1", "tags": [{"a": [1]}, {"a": [1.0]}]},
    {"id": "ab_1", "place": {"country": "DE"}},
    {"id": "ab_1", "place": {"country": "de"}},
    {"id": "ab_1", "place": []},
]


@pytest.mark.parametrize("value", RICH_EDGES)
def test_rich_schemas_get_the_same_verdict_as_python_jsonschema(value: Any) -> None:
    assert make_validator(RICH).errors(value) == _python_only(RICH, value)


@settings(max_examples=200, deadline=None)
@given(
    st.fixed_dictionaries(
        {"id": st.from_regex(r"[a-z]{2}_[0-9]{0,8}", fullmatch=True) | json_values},
        optional=dict.fromkeys(("email", "when", "tags", "place"), json_values),
    )
)
def test_rich_schemas_agree_on_generated_values(value: Any) -> None:
    assert make_validator(RICH).errors(value) == _python_only(RICH, value)


# What generated (OpenAPI-like) registries add: multipleOf, dependent keywords, conditionals,
# contains, propertyNames. multipleOf is evaluated with python-jsonschema's arithmetic.
MORE: dict[str, Any] = {
    "type": "object",
    "properties": {
        "cents": {"type": "integer", "multipleOf": 5},
        "ratio": {"type": "number", "multipleOf": 0.05},
        "step": {"multipleOf": 0.1},
        "big": {"multipleOf": 1e-300},
        "list": {"type": "array", "contains": {"const": 1}, "minContains": 1, "maxContains": 2},
        "map": {"type": "object", "propertyNames": {"pattern": "^[a-z]+$", "maxLength": 3}},
        "kind": {"enum": ["card", "bank"]},
    },
    "dependentRequired": {"ratio": ["cents"]},
    "dependentSchemas": {"big": {"required": ["step"]}},
    "if": {"properties": {"kind": {"const": "card"}}, "required": ["kind"]},
    "then": {"required": ["cents"]},
    "else": {"not": {"required": ["list"]}},
}

MORE_EDGES: list[Any] = [
    {},
    {"cents": 10},
    {"cents": 12},
    {"cents": 10.0},  # an integral float is an integer
    {"cents": True},  # a boolean is not a number: not checked by multipleOf
    {"cents": 5 * 2**70},  # exact big integers
    {"cents": 5 * 2**70 + 1},
    {"cents": 10, "ratio": 0.15},
    {"cents": 10, "ratio": 0.3},
    {"cents": 10, "ratio": 0.1},
    {"ratio": 0.1},  # dependentRequired: ratio needs cents
    {"step": 0.3},  # 0.3 / 0.1 is 2.9999999999999996: not a multiple for python-jsonschema
    {"step": 0.7},
    {"step": 3},
    {"step": "a string"},
    {"big": 1e300, "step": 1},  # the quotient overflows: exact fractions decide
    {"big": 10**400, "step": 1},  # too large for a float: python-jsonschema decides alone
    {"big": 1},  # dependentSchemas: big needs step
    {"kind": "card"},  # if/then: a card needs cents
    {"kind": "card", "cents": 5},
    {"kind": "bank", "list": [1]},  # else: no list
    {"list": [1]},
    {"kind": "card", "cents": 5, "list": [1, 1, 1]},  # maxContains
    {"kind": "card", "cents": 5, "list": [2]},  # minContains
    {"kind": "card", "cents": 5, "list": [1.0, True]},
    {"map": {"ab": 1}},
    {"map": {"abcd": 1}},
    {"map": {"A": 1}},
    [],
]


def test_more_keywords_get_the_fast_accept() -> None:
    assert _fast_accept(MORE) is not None


@pytest.mark.parametrize("value", MORE_EDGES)
def test_more_keywords_get_the_same_verdict_as_python_jsonschema(value: Any) -> None:
    assert make_validator(MORE).errors(value) == _python_only(MORE, value)


numbers = st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.booleans()


@settings(max_examples=300, deadline=None)
@given(
    st.fixed_dictionaries(
        {},
        optional={
            "cents": numbers,
            "ratio": numbers | st.sampled_from([0.05, 0.1, 0.15, 0.3, 0.35, 1.05, 2.5]),
            "step": numbers | st.sampled_from([0.1, 0.2, 0.3, 0.7, 1.1, 3]),
            "big": numbers,
            "list": st.lists(st.sampled_from([1, 1.0, 2, True, "1"]), max_size=4),
            "map": st.dictionaries(st.text(max_size=4), st.none(), max_size=3),
            "kind": st.sampled_from(["card", "bank", "other"]),
        },
    )
    | json_values
)
def test_more_keywords_agree_on_generated_values(value: Any) -> None:
    assert make_validator(MORE).errors(value) == _python_only(MORE, value)


# Recursive schemas (trees, nested filters): each turn of the loop moves down the value.
TREE: dict[str, Any] = {
    "$ref": "#/$defs/Node",
    "$defs": {
        "Node": {
            "type": "object",
            "required": ["key"],
            "additionalProperties": False,
            "properties": {
                "key": {"type": "string", "pattern": "^[a-z]-[0-9]+$"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/Node"}},
                "next": {"$ref": "#/$defs/Node"},
                "where": {"$ref": "#/$defs/Filter"},
            },
        },
        "Filter": {
            "anyOf": [
                {"$ref": "#/$defs/Leaf"},
                {
                    "type": "object",
                    "required": ["and"],
                    "properties": {"and": {"type": "array", "items": {"$ref": "#/$defs/Filter"}}},
                    "additionalProperties": False,
                },
            ]
        },
        "Leaf": {
            "type": "object",
            "required": ["field"],
            "properties": {"field": {"type": "string"}},
        },
    },
}


def _nested(levels: int, leaf: Any) -> Any:
    value = leaf
    for _ in range(levels):
        value = {"key": "a-1", "next": value}
    return value


TREE_EDGES: list[Any] = [
    {"key": "a-1"},
    {"key": "A-1"},
    {"key": "a-1", "children": [{"key": "b-2", "children": [{"key": "c-3"}]}]},
    {"key": "a-1", "children": [{"key": "b-2", "children": [{"key": "C-3"}]}]},
    {"key": "a-1", "where": {"and": [{"field": "x"}, {"and": [{"field": "y"}]}]}},
    {"key": "a-1", "where": {"and": [{"field": "x"}, {"and": [{"nope": 1}]}]}},
    _nested(100, {"key": "z-9"}),
    _nested(100, {"key": "Z-9"}),
    _nested(200, {"key": "z-9"}),  # deeper than the fast path takes: python-jsonschema decides
]


def test_a_recursive_schema_gets_the_fast_accept() -> None:
    assert _fast_accept(TREE) is not None


@pytest.mark.parametrize("value", TREE_EDGES)
def test_recursive_schemas_get_the_same_verdict_as_python_jsonschema(value: Any) -> None:
    assert make_validator(TREE).errors(value) == _python_only(TREE, value)


trees = st.recursive(
    st.fixed_dictionaries({"key": st.sampled_from(["a-1", "b-22", "C-3", ""])}),
    lambda inner: (
        st.fixed_dictionaries(
            {"key": st.sampled_from(["a-1", "x"]), "children": st.lists(inner, max_size=3)}
        )
        | st.fixed_dictionaries({"key": st.sampled_from(["a-1", "x"]), "next": inner})
        | st.fixed_dictionaries({"key": st.just("a-1"), "next": json_values})
    ),
    max_leaves=12,
)


@settings(max_examples=200, deadline=None)
@given(trees | json_values)
def test_recursive_schemas_agree_on_generated_values(value: Any) -> None:
    assert make_validator(TREE).errors(value) == _python_only(TREE, value)


def test_a_value_nested_past_any_stack_is_refused_not_a_crash() -> None:
    """jsonschema-rs recurses once per level of the value on a recursive schema: 100,000
    levels overflowed its stack and ended the process. Such a value never reaches it."""
    import threading

    deep = _nested(100_000, {"key": "a-1"})
    got: list[Any] = []
    worker = threading.Thread(target=lambda: got.append(make_validator(TREE).errors(deep)))
    worker.start()
    worker.join()
    assert [p.keyword for p in got[0]] == ["depth"]


def test_an_uncompilable_pattern_is_refused_not_accepted() -> None:
    schema = {"type": "string", "pattern": "("}  # does not compile: never accepted
    problems = make_validator(schema).errors("ab")
    assert problems and problems == _python_only(schema, "ab")


def _plain_reference(schema: Any, found: Any, same: bool = True) -> bool:
    """The fast path's plainness rule written as plainly as possible (recursive), to hold the
    iterative walk of ``toolctl.schema._plain`` to it. ``same``: ``schema`` applies to the value
    the walk started at (its references go to ``found.level`` too)."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    for key, value in schema.items():
        if not isinstance(key, str):
            return False
        if key.startswith("x-"):
            continue
        inner = same and key not in _DESCENDING
        if key in _OWN_KEYWORDS:
            if not _own_keyword(key, value, found, same):
                return False
        elif key not in _FAST_KEYWORDS:
            return False
        elif key in ("properties", "dependentSchemas"):
            if not isinstance(value, dict) or not all(
                _plain_reference(v, found, inner) for v in value.values()
            ):
                return False
        elif key in _ONE_SUBSCHEMA:
            if not _plain_reference(value, found, inner):
                return False
        elif key in _SUBSCHEMA_LISTS and (
            not isinstance(value, list) or not all(_plain_reference(v, found, inner) for v in value)
        ):
            return False
    return True


_KEYS = st.sampled_from(
    [
        "type",
        "properties",
        "items",
        "additionalProperties",
        "not",
        "anyOf",
        "prefixItems",
        "required",
        "enum",
        "pattern",
        "format",
        "uniqueItems",
        "$ref",
        "x-note",
        "multipleOf",  # plain with a positive number only
        "dependentSchemas",
        "contains",
        "if",
        "patternProperties",  # not plain
        "unevaluatedProperties",  # not plain
        "$defs",  # not plain below the top
    ]
)
_LEAVES = st.one_of(
    st.booleans(),
    st.none(),
    st.integers(-3, 3),
    st.sampled_from(["string", "#/$defs/a", "#/$defs/b-c", "other.json#/x", "email", "^a+$"]),
)
_SCHEMAS = st.recursive(
    _LEAVES,
    lambda inner: st.one_of(
        st.lists(inner, max_size=3),
        st.dictionaries(_KEYS, inner, max_size=4),
        st.dictionaries(st.sampled_from(["a", "b"]), inner, max_size=2).map(
            lambda props: {"properties": props}
        ),
    ),
    max_leaves=25,
)


@given(_SCHEMAS)
@settings(max_examples=400, deadline=None)
def test_the_plainness_walk_agrees_with_the_recursive_rule(schema: Any) -> None:
    """The iterative walk (one stack, no call per subschema) says "plain" exactly when the
    recursive rule does, on plain schemas and on every kind of non-plain one, and finds the
    same references and formats when it does."""
    fast, slow = _Plain([], set()), _Plain([], set())
    verdict = _plain(schema, fast)
    assert verdict == _plain_reference(schema, slow)
    if verdict:
        assert sorted(fast.refs) == sorted(slow.refs)
        assert sorted(fast.level) == sorted(slow.level)
        assert fast.formats == slow.formats


@pytest.mark.parametrize(
    ("schema", "plain"),
    [
        (PLAIN, True),
        ({k: v for k, v in RICH.items() if k != "$defs"}, True),  # as _fast_accept walks it
        (RICH, False),  # $defs is walked by _plain_defs, not as a keyword
        ({"properties": {"a": {"unevaluatedProperties": False}}}, False),  # deep: still found
        ({"properties": {"a": {"multipleOf": 0}}}, False),  # not a positive number
        ({"anyOf": [{"type": "string"}, {"patternProperties": {}}]}, False),
        ({"items": {"$ref": "#/$defs/a"}, "x-anything": {"multipleOf": 1}}, True),
        ({"properties": [{"type": "string"}]}, False),  # properties must be a mapping
        ({"anyOf": {"type": "string"}}, False),  # a list keyword must hold a list
        ({"items": 3}, False),
        ({1: {}}, False),  # a key that is not a string
    ],
)
def test_the_plainness_walk_on_known_schemas(schema: Any, plain: bool) -> None:
    assert _plain(schema, _Plain([], set())) is plain
    assert _plain_reference(schema, _Plain([], set())) is plain
