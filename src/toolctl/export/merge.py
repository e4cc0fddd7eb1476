"""Merging ``allOf`` branches into one schema, only where the result means exactly the same.

A merge is exact when every keyword of the branches can be combined into one keyword that accepts
the same instances (``required`` is a union, ``minimum`` the larger bound, ``type`` and ``enum``
intersections). Anything else (two different ``pattern`` values, two ``anyOf`` lists, a closed
branch next to a branch with other properties) is refused with the reason.
"""

from __future__ import annotations

from typing import Any

ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "$comment",
        "deprecated",
        "readOnly",
        "writeOnly",
        "contentEncoding",
        "contentMediaType",
        "$schema",
        "$id",
        "$anchor",
    }
)
_LOWER_BOUNDS = (
    "minimum",
    "exclusiveMinimum",
    "minLength",
    "minItems",
    "minProperties",
    "minContains",
)
_UPPER_BOUNDS = (
    "maximum",
    "exclusiveMaximum",
    "maxLength",
    "maxItems",
    "maxProperties",
    "maxContains",
)


class MergeError(Exception):
    """The branches cannot be merged without changing what the schema accepts."""


def _types(value: Any) -> list[str]:
    return [value] if isinstance(value, str) else list(value)


def _meet(t: str, others: list[str]) -> str | None:
    if t in others:
        return t
    if {t, "integer"} <= {"number", "integer"} and {"number", "integer"} & set(others):
        return "integer"
    return None


def _merge_types(a: Any, b: Any) -> Any:
    tb = _types(b)
    both = list(dict.fromkeys(m for t in _types(a) if (m := _meet(t, tb)) is not None))
    if not both:
        raise MergeError(f"the branches allow no common type ({a!r} and {b!r})")
    return both[0] if len(both) == 1 else both


def _check_closed(a: dict[str, Any], b: dict[str, Any]) -> None:
    """A branch closed by additionalProperties rejects the other branch's extra properties."""
    for closed, other in ((a, b), (b, a)):
        if "additionalProperties" in closed and "additionalProperties" not in other:
            extra = set(other.get("properties", {})) - set(closed.get("properties", {}))
            if extra:
                raise MergeError(
                    f"one branch sets additionalProperties and another adds properties "
                    f"{sorted(extra)} it does not declare"
                )


def merge_two(a: dict[str, Any], b: dict[str, Any]) -> dict[str, Any]:
    """One schema that accepts exactly what both ``a`` and ``b`` accept (or MergeError)."""
    _check_closed(a, b)
    out = dict(a)
    for key, value in b.items():
        if key not in out:
            out[key] = value
        elif out[key] == value or key in ANNOTATIONS:
            continue  # the first branch's annotation wins (the parent comes first)
        elif key == "properties":
            props = dict(out[key])
            for name, sub in value.items():
                props[name] = (
                    sub
                    if name not in props or props[name] == sub
                    else {"allOf": [props[name], sub]}
                )
            out[key] = props
        elif key == "required":
            out[key] = list(dict.fromkeys([*out[key], *value]))
        elif key == "type":
            out[key] = _merge_types(out[key], value)
        elif key == "enum":
            out[key] = [v for v in out[key] if v in value]
            if not out[key]:
                raise MergeError("the branches' enums have no value in common")
        elif key in _LOWER_BOUNDS:
            out[key] = max(out[key], value)
        elif key in _UPPER_BOUNDS:
            out[key] = min(out[key], value)
        elif (
            key in ("items", "additionalProperties")
            and isinstance(value, dict)
            and isinstance(out[key], dict)
        ):
            out[key] = {"allOf": [out[key], value]}
        elif key == "allOf":
            out[key] = [*out[key], *value]
        else:
            raise MergeError(f"the branches set {key!r} differently")
    if "const" in out and "enum" in out:
        if out["const"] not in out["enum"]:
            raise MergeError("'const' is not one of the 'enum' values")
        del out["enum"]
    return out


def merge_all_of(node: dict[str, Any], branches: list[Any]) -> dict[str, Any]:
    """``node`` (without its ``allOf``) merged with each branch in order."""
    out = {k: v for k, v in node.items() if k != "allOf"}
    for branch in branches:
        if branch is True:
            continue
        if not isinstance(branch, dict):
            raise MergeError("a branch is 'false': nothing can match")
        if "$ref" in branch:
            raise MergeError("a branch is a recursive $ref")
        out = merge_two(out, branch)
    return out
