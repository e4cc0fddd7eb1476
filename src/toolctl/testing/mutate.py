"""Invalid inputs: a valid value broken in exactly one schema-relevant place.

Each mutation targets one keyword (a required key dropped, a wrong type, a value outside an
``enum``, a bound or a length, a ``pattern`` or ``format`` missed, an unknown key where
``additionalProperties`` is false), so the validation error a tool returns can be checked for
pointing at the right field. Only mutations the validator really rejects are used.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from toolctl.testing.gen import Unsatisfiable, ValueGenerator
from toolctl.testing.jsonmatch import JsonPath, pointer

DELETE: Any = object()
_WRONG_TYPE: dict[str, Any] = {
    "string": 12345,
    "integer": "12",
    "number": "1.5",
    "boolean": "true",
    "array": {"item": 1},
    "object": ["item"],
    "null": 0,
}


@dataclass(frozen=True)
class Mutation:
    """Set ``path`` to ``value`` (or delete it) and say what that breaks."""

    path: JsonPath
    value: Any
    what: str

    def apply(self, instance: Any) -> Any:
        """A copy of ``instance`` with this mutation applied."""
        if not self.path:
            return copy.deepcopy(self.value)
        out = copy.deepcopy(instance)
        node = out
        for part in self.path[:-1]:
            node = node[part]
        if self.value is DELETE:
            del node[self.path[-1]]
        else:
            node[self.path[-1]] = copy.deepcopy(self.value)
        return out

    def __str__(self) -> str:
        return f"{self.what} at {pointer(self.path)}"


def mutations(
    gen: ValueGenerator, schema: Any, value: Any, path: JsonPath = ()
) -> Iterator[Mutation]:
    """Every single-keyword break of ``value`` against ``schema`` that we know how to make."""
    try:
        schema = gen.flatten(schema)
    except Unsatisfiable:
        return
    if not isinstance(schema, dict):
        return
    yield from _scalar_breaks(schema, value, path)
    if isinstance(value, dict):
        yield from _object_breaks(gen, schema, value, path)
    elif isinstance(value, list):
        yield from _array_breaks(gen, schema, value, path)


def _kind_name(value: Any) -> str:
    return {
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
        dict: "object",
        list: "array",
        type(None): "null",
    }.get(type(value), "")


def _scalar_breaks(schema: dict[str, Any], value: Any, path: JsonPath) -> Iterator[Mutation]:
    declared = schema.get("type")
    kinds = [declared] if isinstance(declared, str) else list(declared or [])
    for kind in kinds if path else ():  # arguments are always an object: break inside it
        wrong = _WRONG_TYPE.get(kind)
        if _kind_name(wrong) not in kinds:
            yield Mutation(path, wrong, f"wrong type (not {kind})")
    if "enum" in schema or "const" in schema:
        yield Mutation(path, "__not_an_allowed_value__", "value outside enum/const")
    if isinstance(value, str):
        if schema.get("minLength", 0) > 0:
            yield Mutation(path, "", "string shorter than minLength")
        if "maxLength" in schema:
            yield Mutation(path, "x" * (schema["maxLength"] + 1), "string longer than maxLength")
        if "pattern" in schema:
            yield Mutation(path, "\u0000 ?!", "string not matching pattern")
        if "format" in schema:
            yield Mutation(path, f"not a {schema['format']}", f"string not a {schema['format']}")
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        for key, delta in (
            ("minimum", -1),
            ("exclusiveMinimum", 0),
            ("maximum", 1),
            ("exclusiveMaximum", 0),
        ):
            bound = schema.get(key)
            if isinstance(bound, (int, float)) and not isinstance(bound, bool):
                yield Mutation(path, bound + delta, f"number beyond {key}")
        if schema.get("type") == "integer":
            yield Mutation(path, 0.5, "fraction where an integer is required")


def _object_breaks(
    gen: ValueGenerator, schema: dict[str, Any], value: dict[str, Any], path: JsonPath
) -> Iterator[Mutation]:
    for key in schema.get("required", []):
        if key in value:
            yield Mutation((*path, key), DELETE, "required key missing")
    if schema.get("additionalProperties") is False:
        yield Mutation((*path, "unexpected_key"), "x", "unknown key")
    props = schema.get("properties", {})
    for key, item in value.items():
        if key in props:
            yield from mutations(gen, props[key], item, (*path, key))
    for key in props.keys() - value.keys():  # an optional key, present with a wrong type
        try:
            sub = gen.flatten(props[key])
        except Unsatisfiable:
            continue
        if isinstance(sub, dict) and isinstance(sub.get("type"), str):
            yield Mutation((*path, key), _WRONG_TYPE.get(sub["type"]), "wrong type")


def _array_breaks(
    gen: ValueGenerator, schema: dict[str, Any], value: list[Any], path: JsonPath
) -> Iterator[Mutation]:
    if schema.get("minItems", 0) > 0:
        yield Mutation(path, [], "array shorter than minItems")
    if "maxItems" in schema and value:
        yield Mutation(path, value * (schema["maxItems"] + 1), "array longer than maxItems")
    items = schema.get("items")
    for i, item in enumerate(value):
        if isinstance(items, dict):
            yield from mutations(gen, items, item, (*path, i))


def invalid(gen: ValueGenerator, base: Any, tries: int = 5) -> tuple[Any, Mutation]:
    """A value the root schema rejects, made from valid ``base`` (or a fresh valid value, when
    ``base`` offers nothing to break) by one random mutation."""
    for _ in range(tries):
        found = list(mutations(gen, gen.root, base))
        gen.rng.shuffle(found)
        for mutation in found:
            value = mutation.apply(base)
            if not gen.accepts(value):
                return value, mutation
        base = gen.valid()
    raise Unsatisfiable("no mutation of a valid input made it invalid")
