"""Random values that satisfy a JSON Schema, for fuzzing (no third-party generator needed).

:class:`ValueGenerator` proposes values from the schema's keywords: ``$ref`` (local, as bundled
schemas have), ``enum``/``const``, ``type`` lists and OpenAPI ``nullable``, ``allOf``/``anyOf``/
``oneOf``, nested objects and arrays, string ``format``/``pattern``/lengths and numeric bounds.
It aims at edges (empty strings, bounds, zero, unicode) because that is where handlers break.
The real validator is the judge: :meth:`ValueGenerator.valid` only returns values it accepts.
"""

from __future__ import annotations

import random
import string
import uuid
from collections.abc import Callable
from typing import Any

from toolctl.refs import parse_pointer, resolve_pointer
from toolctl.schema import Validator, cached_validator
from toolctl.testing import regexgen

MAX_DEPTH = 6
TRIES = 25
_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
_TEXT = string.ascii_letters + string.digits + " _-.,!?#%&<>@'\"/\\é漢🙂\n"
_EDGE_STRINGS = ("", " ", "0", "null", "é", "🙂", "a\nb", "<b>x</b>", "'; --", "../x")


class Unsatisfiable(ValueError):
    """No value was found for a schema (``false``, contradictory, or beyond the generator)."""


def _formats(rng: random.Random) -> dict[str, Callable[[], str]]:
    n = rng.randint(0, 9999)
    return {
        "date": lambda: (
            f"{rng.randint(1970, 2099):04}-{rng.randint(1, 12):02}-{rng.randint(1, 28):02}"
        ),
        "date-time": lambda: (
            f"2024-0{rng.randint(1, 9)}-1{rng.randint(0, 9)}T"
            f"{rng.randint(0, 23):02}:{rng.randint(0, 59):02}:00Z"
        ),
        "time": lambda: f"{rng.randint(0, 23):02}:{rng.randint(0, 59):02}:00Z",
        "email": lambda: f"user{n}@example.com",
        "idn-email": lambda: f"user{n}@example.com",
        "uuid": lambda: str(uuid.UUID(int=rng.getrandbits(128), version=4)),
        "uri": lambda: f"https://example.com/item/{n}",
        "iri": lambda: f"https://example.com/item/{n}",
        "url": lambda: f"https://example.com/item/{n}",
        "uri-reference": lambda: f"/item/{n}",
        "iri-reference": lambda: f"/item/{n}",
        "uri-template": lambda: "https://example.com/item/{id}",
        "hostname": lambda: f"host{n}.example.com",
        "idn-hostname": lambda: f"host{n}.example.com",
        "ipv4": lambda: ".".join(str(rng.randint(0, 255)) for _ in range(4)),
        "ipv6": lambda: ":".join(f"{rng.randint(0, 0xFFFF):x}" for _ in range(8)),
        "json-pointer": lambda: f"/a/{n}",
        "relative-json-pointer": lambda: f"{rng.randint(0, 3)}/a/{n}",
        "regex": lambda: "^[a-z]+$",
        "duration": lambda: f"P{rng.randint(1, 30)}D",
    }


def resolve(root: Any, ref: str) -> Any:
    """The subschema at a local ``#/...`` reference inside ``root``."""
    if not ref.startswith("#"):
        raise Unsatisfiable(f"cannot follow non-local $ref {ref!r}")
    try:
        return resolve_pointer(root, parse_pointer(ref[1:]))
    except (KeyError, ValueError):
        raise Unsatisfiable(f"$ref {ref!r} points nowhere") from None


def merge(base: dict[str, Any], extra: Any) -> dict[str, Any]:
    """``base`` with ``extra``'s keywords added (properties and required united)."""
    if not isinstance(extra, dict):
        return base
    out = {**base, **{k: v for k, v in extra.items() if k not in ("properties", "required")}}
    if "properties" in base or "properties" in extra:
        out["properties"] = {**base.get("properties", {}), **extra.get("properties", {})}
    if "required" in base or "required" in extra:
        out["required"] = list(
            dict.fromkeys([*base.get("required", []), *extra.get("required", [])])
        )
    return out


class ValueGenerator:
    """Draws values for (sub)schemas of one root schema from a seeded ``random.Random``."""

    def __init__(self, root: Any, rng: random.Random, *, defaults: bool = False) -> None:
        self.root = root
        self.rng = rng
        self.validator: Validator = cached_validator(root)
        # whether the pipeline fills the schema's defaults in before validating (then leaving
        # out a required argument that has a default is no invalid input)
        self.defaults = defaults

    def accepts(self, value: Any) -> bool:
        """Whether a call with ``value`` passes input validation, as the pipeline runs it."""
        if self.defaults:
            from toolctl.schemadefaults import fill_defaults

            value = fill_defaults(self.root, value)
        return self.validator.is_valid(value)

    def valid(self, tries: int = TRIES) -> Any:
        """A value the root schema accepts; :class:`Unsatisfiable` when none turns up."""
        last = "no candidate"
        for _ in range(tries):
            try:
                value = self.draw(self.root)
            except (Unsatisfiable, regexgen.RegexUnsupported) as exc:
                last = str(exc)
                continue
            if self.validator.is_valid(value):
                return value
            last = "generated values did not validate"
        raise Unsatisfiable(f"could not generate a valid value: {last}")

    # -- drawing ------------------------------------------------------------------------

    def flatten(self, schema: Any, depth: int = 0) -> Any:
        """``schema`` with its ``$ref``, ``allOf`` and one ``anyOf``/``oneOf`` branch merged in."""
        if depth > MAX_DEPTH:
            raise Unsatisfiable("schema nests too deeply")
        if not isinstance(schema, dict):
            return schema
        schema = dict(schema)
        if "$ref" in schema:
            target = self.flatten(resolve(self.root, schema.pop("$ref")), depth + 1)
            if target is False:
                raise Unsatisfiable("$ref to false")
            schema = merge(target if isinstance(target, dict) else {}, schema)
        for sub in schema.pop("allOf", []):
            schema = merge(schema, self.flatten(sub, depth + 1))
        for key in ("anyOf", "oneOf"):
            branches = schema.pop(key, None)
            if branches:
                schema = merge(schema, self.flatten(self.rng.choice(branches), depth + 1))
        return schema

    def draw(self, schema: Any, depth: int = 0) -> Any:
        """A value proposed for ``schema`` (not guaranteed valid: check it)."""
        schema = self.flatten(schema, depth)
        if schema is False:
            raise Unsatisfiable("the schema is false")
        if schema is True or not isinstance(schema, dict):
            schema = {}
        if "const" in schema:
            return schema["const"]
        if "enum" in schema:
            return self.rng.choice(schema["enum"])
        kind = self._pick_type(schema, depth)
        draw_kind: Callable[[dict[str, Any], int], Any] = getattr(self, f"_draw_{kind}")
        return draw_kind(schema, depth)

    def _pick_type(self, schema: dict[str, Any], depth: int) -> str:
        declared = schema.get("type")
        types = [declared] if isinstance(declared, str) else list(declared or [])
        if schema.get("nullable") is True and "null" not in types and types:
            types.append("null")
        if not types:
            types = self._infer_types(schema, depth)
        if "null" in types and len(types) > 1 and self.rng.random() > 0.2:
            types.remove("null")  # null is one edge among many; do not let it dominate
        return str(self.rng.choice(types))

    @staticmethod
    def _infer_types(schema: dict[str, Any], depth: int) -> list[str]:
        if {"properties", "required", "additionalProperties"} & schema.keys():
            return ["object"]
        if {"items", "prefixItems", "minItems", "maxItems"} & schema.keys():
            return ["array"]
        if {"pattern", "format", "minLength", "maxLength"} & schema.keys():
            return ["string"]
        if {
            "minimum",
            "maximum",
            "exclusiveMinimum",
            "exclusiveMaximum",
            "multipleOf",
        } & schema.keys():
            return ["number"]
        return list(_TYPES[:5]) if depth >= MAX_DEPTH - 1 else list(_TYPES)

    def _draw_null(self, schema: dict[str, Any], depth: int) -> None:
        return None

    def _draw_boolean(self, schema: dict[str, Any], depth: int) -> bool:
        return self.rng.random() < 0.5

    def _bounds(self, schema: dict[str, Any], integer: bool) -> tuple[float, float]:
        step = 1 if integer else 1e-6
        low = schema.get("minimum", -(10**6))
        high = schema.get("maximum", 10**6)
        if isinstance(schema.get("exclusiveMinimum"), (int, float)):
            low = max(low, schema["exclusiveMinimum"] + step)
        if isinstance(schema.get("exclusiveMaximum"), (int, float)):
            high = min(high, schema["exclusiveMaximum"] - step)
        if low > high:
            raise Unsatisfiable("empty numeric range")
        return low, high

    def _draw_integer(self, schema: dict[str, Any], depth: int) -> int:
        low, high = self._bounds(schema, integer=True)
        lo, hi = int(-(-low // 1)), int(high // 1)
        if lo > hi:
            raise Unsatisfiable("no integer within the bounds")
        edges = [v for v in (lo, hi, 0, 1, -1) if lo <= v <= hi]
        value = (
            self.rng.choice(edges)
            if edges and self.rng.random() < 0.4
            else self.rng.randint(lo, hi)
        )
        step = schema.get("multipleOf")
        if isinstance(step, int) and step > 0:
            value = (value // step) * step
            if value < lo:
                value += step
        return value

    def _draw_number(self, schema: dict[str, Any], depth: int) -> float | int:
        if self.rng.random() < 0.3 or isinstance(schema.get("multipleOf"), int):
            return self._draw_integer(schema, depth)
        low, high = self._bounds(schema, integer=False)
        if self.rng.random() < 0.2:
            return self.rng.choice([low, high])
        return round(self.rng.uniform(low, high), self.rng.choice([0, 2, 6]))

    def _draw_string(self, schema: dict[str, Any], depth: int) -> str:
        fmt = _formats(self.rng).get(str(schema.get("format")))
        if fmt is not None:
            return fmt()
        if "pattern" in schema:
            return regexgen.draw(schema["pattern"], self.rng)
        low = schema.get("minLength", 0)
        high = schema.get("maxLength", low + 12)
        if self.rng.random() < 0.3:
            edges = [s for s in _EDGE_STRINGS if low <= len(s) <= high]
            if edges:
                return self.rng.choice(edges)
        size = self.rng.randint(low, max(low, min(high, low + 12)))
        return "".join(self.rng.choice(_TEXT) for _ in range(size))

    def _draw_array(self, schema: dict[str, Any], depth: int) -> list[Any]:
        prefix = schema.get("prefixItems", [])
        items = schema.get("items", {})
        low = max(schema.get("minItems", 0), 0)
        high = schema.get("maxItems", low + 4)
        if items is False:  # a closed tuple
            high = min(high, len(prefix))
        choices = self.flatten(items).get("enum") if isinstance(items, dict) else None
        if schema.get("uniqueItems") and isinstance(choices, list):
            high = min(high, len(prefix) + len(choices))
        size = self.rng.randint(min(low, high), max(min(low, high), min(high, low + 4)))
        out: list[Any] = []
        for i in range(size):
            sub = prefix[i] if i < len(prefix) else items
            for _ in range(5 if schema.get("uniqueItems") else 1):
                value = self.draw(sub, depth + 1)
                if value not in out:
                    break
            out.append(value)
        return out

    def _draw_object(self, schema: dict[str, Any], depth: int) -> dict[str, Any]:
        props: dict[str, Any] = schema.get("properties", {})
        required = list(schema.get("required", []))
        for key, needs in schema.get("dependentRequired", {}).items():
            if key in required:
                required.extend(needs)
        chosen = [k for k in props if k in required or self.rng.random() < 0.5]
        chosen += [k for k in required if k not in props]
        out: dict[str, Any] = {}
        for key in dict.fromkeys(chosen):
            out[key] = self.draw(props.get(key, schema.get("additionalProperties", {})), depth + 1)
        extra = schema.get("additionalProperties", True)
        if extra is not False and self.rng.random() < 0.15 and not schema.get("patternProperties"):
            key = "extra_" + str(self.rng.randint(0, 99))
            if key not in props:
                out[key] = self.draw(
                    extra if isinstance(extra, dict) else {"type": "string"}, depth + 1
                )
        for key in list(props)[: max(0, schema.get("minProperties", 0) - len(out))]:
            out.setdefault(key, self.draw(props[key], depth + 1))
        return out
