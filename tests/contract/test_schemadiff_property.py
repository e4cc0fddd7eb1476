"""Property: what `toolctl diff` calls compatible really is.

For generated schema pairs (a schema and a mutation of it), when the diff finds nothing that
narrows (or cannot be decided), every instance the old schema accepts — drawn by the fuzz
generator of `toolctl test` — the new one accepts (the input side). When it finds nothing that
widens, every instance the new schema accepts, the old one accepts (the output side, roles
reversed).

The fuzz generator sends undeclared properties only as ``extra_NN`` keys, and the generated
schemas never declare such names, so the input side is checked under the contract the diff
documents: declaring a property on an object that accepts undeclared ones is compatible.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from toolctl.contract.schemadiff import Effect, compare
from toolctl.schema import cached_validator
from toolctl.testing.gen import Unsatisfiable, ValueGenerator

NAMES = ("a", "b", "c", "d")
PATTERNS = ("^[a-z]+$", "^[a-z]*$", "^x")
SAMPLES = 25

ints = st.integers(min_value=-5, max_value=12)


@st.composite
def strings(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string"}
    if draw(st.booleans()):
        schema["minLength"] = draw(st.integers(0, 3))
    if draw(st.booleans()):
        schema["maxLength"] = draw(st.integers(3, 8))
    if draw(st.integers(0, 4)) == 0:
        schema["enum"] = draw(
            st.lists(st.sampled_from(["x", "yy", "zzz", "q"]), min_size=1, max_size=3, unique=True)
        )
    elif draw(st.integers(0, 4)) == 0:
        schema["pattern"] = draw(st.sampled_from(PATTERNS))
    return schema


@st.composite
def numbers(draw: st.DrawFn) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": draw(st.sampled_from(["integer", "number"]))}
    low = draw(ints)
    if draw(st.booleans()):
        schema[draw(st.sampled_from(["minimum", "exclusiveMinimum"]))] = low
    if draw(st.booleans()):
        schema[draw(st.sampled_from(["maximum", "exclusiveMaximum"]))] = low + draw(
            st.integers(2, 10)
        )
    if draw(st.integers(0, 3)) == 0:
        schema["multipleOf"] = draw(st.sampled_from([1, 2, 3, 4]))
    return schema


def leaves() -> st.SearchStrategy[dict[str, Any]]:
    return st.one_of(
        strings(), numbers(), st.just({"type": "boolean"}), st.just({"type": ["string", "null"]})
    )


@st.composite
def arrays(draw: st.DrawFn, inner: st.SearchStrategy[dict[str, Any]]) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "array", "items": draw(inner)}
    if draw(st.booleans()):
        schema["minItems"] = draw(st.integers(0, 2))
    if draw(st.booleans()):
        schema["maxItems"] = draw(st.integers(2, 4))
    if draw(st.integers(0, 3)) == 0:
        schema["uniqueItems"] = True
    return schema


@st.composite
def objects(draw: st.DrawFn, depth: int = 0) -> dict[str, Any]:
    inner = leaves() if depth >= 1 else st.one_of(leaves(), arrays(leaves()), objects(depth + 1))
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    schema: dict[str, Any] = {
        "type": "object",
        "properties": {n: draw(inner) for n in names},
        "required": draw(st.lists(st.sampled_from(names), max_size=len(names), unique=True)),
    }
    if draw(st.booleans()):
        schema["additionalProperties"] = False
    return schema


def _nodes(schema: Any, path: tuple[Any, ...] = ()) -> list[tuple[tuple[Any, ...], Any]]:
    out = [(path, schema)]
    if isinstance(schema, dict):
        for name, sub in (schema.get("properties") or {}).items():
            out += _nodes(sub, (*path, "properties", name))
        if isinstance(schema.get("items"), dict):
            out += _nodes(schema["items"], (*path, "items"))
    return out


MUTATIONS = (
    "bound",
    "length",
    "enum",
    "required",
    "add_property",
    "drop_property",
    "closed",
    "type",
    "items",
    "multiple",
    "pattern",
    "anyof",
    "not",
    "allof",
    "const",
)


@st.composite
def mutated(draw: st.DrawFn, schema: dict[str, Any]) -> dict[str, Any]:
    new = copy.deepcopy(schema)
    for _ in range(draw(st.integers(1, 3))):
        nodes = _nodes(new)
        _, node = draw(st.sampled_from(nodes))
        kind = draw(st.sampled_from(MUTATIONS))
        _mutate(draw, node, kind)
    return new


def _mutate(draw: st.DrawFn, node: dict[str, Any], kind: str) -> None:
    if kind == "bound":
        key = draw(st.sampled_from(["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"]))
        if key in node and draw(st.booleans()):
            del node[key]
        else:
            node[key] = draw(ints)
    elif kind == "length":
        key = draw(st.sampled_from(["minLength", "maxLength", "minItems", "maxItems"]))
        if key in node and draw(st.booleans()):
            del node[key]
        else:
            node[key] = draw(st.integers(0, 6))
    elif kind == "enum":
        values = list(node.get("enum", []))
        pool = ["x", "yy", "zzz", "q", 1, None]
        if values and draw(st.booleans()):
            values.remove(draw(st.sampled_from(values)))
        else:
            values.append(draw(st.sampled_from(pool)))
        if values:
            node["enum"] = list(dict.fromkeys(values))
        else:
            node.pop("enum", None)
    elif kind == "required" and node.get("properties"):
        names = list(node["properties"])
        node["required"] = draw(st.lists(st.sampled_from(names), unique=True, max_size=len(names)))
    elif kind == "add_property" and "properties" in node:
        node["properties"][draw(st.sampled_from(NAMES))] = draw(leaves())
    elif kind == "drop_property" and node.get("properties"):
        name = draw(st.sampled_from(sorted(node["properties"])))
        del node["properties"][name]
        node["required"] = [r for r in node.get("required", []) if r != name]
    elif kind == "closed" and "properties" in node:
        if node.get("additionalProperties") is False:
            del node["additionalProperties"]
        else:
            node["additionalProperties"] = False
    elif kind == "type" and "type" in node and node["type"] != "object":
        node["type"] = draw(
            st.sampled_from(
                [
                    "string",
                    "integer",
                    "number",
                    "boolean",
                    ["string", "null"],
                    ["integer", "string"],
                ]
            )
        )
    elif kind == "items" and isinstance(node.get("items"), dict):
        node["items"] = draw(leaves())
    elif kind == "multiple":
        if "multipleOf" in node and draw(st.booleans()):
            del node["multipleOf"]
        else:
            node["multipleOf"] = draw(st.sampled_from([1, 2, 3, 4, 6]))
    elif kind == "pattern":
        if "pattern" in node and draw(st.booleans()):
            del node["pattern"]
        else:
            node["pattern"] = draw(st.sampled_from(PATTERNS))
    elif kind in ("not", "allof", "const"):
        _wrap(draw, node, kind)
    elif kind == "anyof" and "type" in node and node["type"] != "object":
        branch = {k: v for k, v in node.items() if k not in ("description",)}
        node.clear()
        node["anyOf"] = [branch, draw(leaves())] if draw(st.booleans()) else [branch]


def _wrap(draw: st.DrawFn, node: dict[str, Any], kind: str) -> None:
    if kind == "not":
        if "not" in node and draw(st.booleans()):
            del node["not"]
        else:
            node["not"] = draw(st.one_of(leaves(), st.just({"const": "x"}), st.just({"const": 3})))
    elif kind == "allof" and "type" in node and node["type"] != "object":
        extra = draw(st.one_of(leaves(), st.just({"maxLength": 4}), st.just({"minimum": 0})))
        node.setdefault("allOf", []).append(extra)
    elif kind == "const" and "type" in node and node["type"] != "object":
        node["const"] = draw(st.sampled_from(["x", "yy", 1, 2, True, None]))


@st.composite
def pairs(draw: st.DrawFn) -> tuple[dict[str, Any], dict[str, Any], int]:
    old = draw(objects())
    return old, draw(mutated(old)), draw(st.integers(0, 2**32))


def _instances(schema: dict[str, Any], seed: int) -> list[Any]:
    gen = ValueGenerator(schema, random.Random(seed))
    out = []
    for _ in range(SAMPLES):
        try:
            out.append(gen.valid())
        except Unsatisfiable:
            continue
    return out


def _effects(old: Any, new: Any) -> set[Effect]:
    return {c.effect for c in compare(old, new)}


@pytest.mark.slow  # 400 generated schema pairs: seconds of CPU, run by the full suite
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs())
def test_compatible_input_change_accepts_every_old_instance(
    pair: tuple[dict[str, Any], dict[str, Any], int],
) -> None:
    old, new, seed = pair
    effects = _effects(old, new)
    if effects & {Effect.NARROWS, Effect.UNKNOWN}:
        event("input: not compatible")
        return
    event("input: compatible")
    accepts = cached_validator(new)
    for instance in _instances(old, seed):
        assert accepts.is_valid(instance), (instance, compare(old, new))


@pytest.mark.slow  # 400 generated schema pairs: seconds of CPU, run by the full suite
@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(pairs())
def test_compatible_output_change_yields_only_old_instances(
    pair: tuple[dict[str, Any], dict[str, Any], int],
) -> None:
    old, new, seed = pair
    effects = _effects(old, new)
    if effects & {Effect.WIDENS, Effect.UNKNOWN}:
        event("output: not compatible")
        return
    event("output: compatible")
    accepts = cached_validator(old)
    for instance in _instances(new, seed):
        assert accepts.is_valid(instance), (instance, compare(old, new))


def test_the_generated_pairs_reach_both_verdicts() -> None:
    """Guard against a vacuous property: many generated pairs are compatible, many are not.
    Derandomized: the same 200 pairs every run (random ones gave 28 to 72 compatible; a
    rare run below the threshold would fail CI for nothing)."""
    verdicts: dict[str, int] = {"compatible": 0, "other": 0}

    @settings(max_examples=200, deadline=None, database=None, derandomize=True)
    @given(pairs())
    def count(pair: tuple[dict[str, Any], dict[str, Any], int]) -> None:
        effects = _effects(pair[0], pair[1])
        key = "other" if effects & {Effect.NARROWS, Effect.UNKNOWN} else "compatible"
        verdicts[key] += 1

    count()
    assert verdicts["compatible"] >= 20 and verdicts["other"] >= 20, verdicts
