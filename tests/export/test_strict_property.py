"""Property tests of OpenAI strict conversion on generated schemas and instances.

* A schema is refused exactly when it has an open object (a map, a free-form object, or
  patternProperties), and the errors name exactly those objects' paths.
* For every other schema, an instance valid under the original (optional properties absent) maps
  to one valid under the strict schema (optional properties null), and maps back unchanged.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.export.specs import make_spec
from toolctl.export.base import Findings
from toolctl.export.convert import Profile, convert
from toolctl.export.strict import (
    ANTHROPIC_STRICT,
    OPENAI_STRICT,
    from_strict_instance,
    to_strict_instance,
)
from toolctl.schema import check_schema, make_validator

pytestmark = pytest.mark.timeout(300)
NAMES = ("a", "b", "c", "d")
LEAVES = st.one_of(
    st.just({"type": "string"}),
    st.just({"type": "boolean"}),
    st.just({"type": "number", "minimum": -5, "maximum": 5}),
    st.integers(-3, 3).map(lambda lo: {"type": "integer", "minimum": lo, "maximum": lo + 4}),
    st.lists(st.sampled_from(["x", "y", "z"]), min_size=1, max_size=3, unique=True).map(
        lambda e: {"type": "string", "enum": e}
    ),
    st.just({"type": ["string", "null"]}),
    st.just({"type": "string", "minLength": 1}),
    st.just({"anyOf": [{"type": "string"}, {"type": "integer", "minimum": 0, "maximum": 3}]}),
    st.just({"$ref": "#/$defs/Choice"}),
)
DEFS = {"Choice": {"type": "string", "enum": ["p", "q"]}}
OPEN_SCHEMAS = [
    {"type": "object", "additionalProperties": {"type": "string"}},
    {"type": "object"},
    {"type": "object", "properties": {}, "patternProperties": {"^x": {"type": "string"}}},
]
OPEN = st.sampled_from(OPEN_SCHEMAS)


def _nullable(schema: dict[str, Any]) -> bool:
    return isinstance(schema.get("type"), list) and "null" in schema["type"]


def schemas(depth: int, open_ok: bool) -> st.SearchStrategy[dict[str, Any]]:
    """Leaf, array or object schemas; with ``open_ok`` some objects are open (refusable)."""
    if depth == 0:
        return LEAVES
    inner = schemas(depth - 1, open_ok)
    options = [LEAVES, inner.map(lambda s: {"type": "array", "items": s}), objects(inner)]
    if open_ok:
        options.append(OPEN)
    return st.one_of(*options)


@st.composite
def objects(draw: st.DrawFn, inner: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    names = draw(st.lists(st.sampled_from(NAMES), max_size=4, unique=True))
    props = {n: draw(inner) for n in names}
    # a nullable property is kept required: absent and null would merge (warned, tested apart)
    required = [n for n in names if _nullable(props[n]) or draw(st.booleans())]
    node: dict[str, Any] = {"type": "object", "properties": props, "required": required}
    if draw(st.booleans()):
        node["additionalProperties"] = False
    return node


def roots(open_ok: bool) -> st.SearchStrategy[dict[str, Any]]:
    return objects(schemas(2, open_ok)).map(lambda root: {**root, "$defs": DEFS})


def instances(schema: dict[str, Any]) -> st.SearchStrategy[Any]:
    """Values valid under one generated (closed) schema."""
    t = schema.get("type")
    if "$ref" in schema:
        return instances(DEFS[schema["$ref"].rsplit("/", 1)[1]])
    if "anyOf" in schema:
        return st.one_of(*[instances(b) for b in schema["anyOf"]])
    if "enum" in schema:
        return st.sampled_from(schema["enum"])
    if t == "string":
        return st.text(alphabet="ab", min_size=schema.get("minLength", 0), max_size=3)
    if t == ["string", "null"]:
        return st.one_of(st.none(), st.text(alphabet="ab", max_size=3))
    if t == "boolean":
        return st.booleans()
    if t == "integer":
        return st.integers(schema["minimum"], schema["maximum"])
    if t == "number":
        return st.floats(-5, 5, allow_nan=False, allow_infinity=False)
    if t == "array":
        return st.lists(instances(schema["items"]), max_size=2)
    props = schema["properties"]
    required = set(schema["required"])
    return st.fixed_dictionaries(
        {n: instances(s) for n, s in props.items() if n in required},
        optional={n: instances(s) for n, s in props.items() if n not in required},
    )


def open_paths(schema: Any, path: tuple[str | int, ...] = ()) -> set[str]:
    """JSON pointers (under /inputSchema) of the open objects in a generated schema."""
    if not isinstance(schema, dict):
        return set()
    found = set()
    if schema in OPEN_SCHEMAS:
        found.add("/" + "/".join(["inputSchema", *map(str, path)]))
    for name, sub in schema.get("properties", {}).items():
        found |= open_paths(sub, (*path, "properties", name))
    if "items" in schema:
        found |= open_paths(schema["items"], (*path, "items"))
    return found


def _convert(
    schema: dict[str, Any], profile: Profile = OPENAI_STRICT
) -> tuple[Any, bool, Findings]:
    out = Findings(make_spec(strict=True, inputSchema=schema), "test")
    converted, ok = convert(schema, profile, out, ("inputSchema",))
    return converted, ok, out


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(roots(open_ok=True), st.sampled_from([OPENAI_STRICT, ANTHROPIC_STRICT]))
def test_refused_schemas_are_exactly_those_reported(
    schema: dict[str, Any], profile: Profile
) -> None:
    _, ok, out = _convert(schema, profile)
    errors = {d.pointer for d in out.items if d.severity.value == "error"}
    assert errors == open_paths(schema)
    assert ok == (not errors)
    assert all(d.code == "TX311" for d in out.items if d.severity.value == "error")


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_instances_round_trip_through_the_strict_form(data: st.DataObject) -> None:
    schema = data.draw(roots(open_ok=False))
    strict, ok, _ = _convert(schema)
    assert ok
    assert check_schema(strict) == []
    instance = data.draw(instances(schema))
    assert make_validator(schema).is_valid(instance)
    mapped = to_strict_instance(schema, instance)
    assert make_validator(strict).is_valid(mapped), (strict, mapped)
    assert from_strict_instance(schema, mapped) == instance


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data())
def test_anthropic_strict_accepts_every_original_instance(data: st.DataObject) -> None:
    """Anthropic keeps optional properties: the instance itself stays valid."""
    schema = data.draw(roots(open_ok=False))
    strict, ok, _ = _convert(schema, ANTHROPIC_STRICT)
    assert ok and check_schema(strict) == []
    instance = data.draw(instances(schema))
    assert make_validator(strict).is_valid(instance)
