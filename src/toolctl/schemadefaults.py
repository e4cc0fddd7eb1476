"""JSON Schema ``default`` values filled into a tool's input before its handler runs (used by
the runtime, by `toolctl test`'s fuzzer and by the loader's check of test inputs).

A model or an MCP client routinely omits an argument whose schema declares a ``default``; the
handler should still find it in its input. :func:`fill_defaults` adds every default the schema
states where the instance lacks the property, at any depth the validator sees: ``properties``
of nested objects, ``items``/``prefixItems``, ``additionalProperties``, through local ``$ref``
and every ``allOf`` branch, and through the one ``anyOf``/``oneOf`` branch whose ``type``
alone accepts the value (never guessing between branches that could both apply).

The caller's object is never changed: a container that gains a value is copied (only that
container and its parents), and each default is copied so a handler that mutates its input
cannot change the schema.
"""

from __future__ import annotations

import copy
from typing import Any

from toolctl.refs import parse_pointer, resolve_pointer

_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "object": (dict,),
    "array": (list,),
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "null": (type(None),),
}
_MAX_REF_HOPS = 64  # a $ref chain longer than this (or a cycle) adds nothing more


def has_defaults(schema: Any) -> bool:
    """True when ``default`` appears anywhere in ``schema`` (so filling can be skipped)."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "default" in node:
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def fill_defaults(schema: Any, instance: Any) -> Any:
    """``instance`` with the defaults of ``schema`` filled in (a new object when any was added)."""
    return _Filler(schema).fill(schema, instance, 0)


class _Filler:
    """One fill: the root schema (for ``#/...`` references)."""

    def __init__(self, root: Any) -> None:
        self.root = root

    def _resolve(self, schema: Any) -> list[dict[str, Any]]:
        """``schema`` and the schemas its ``$ref`` chain names (local references only)."""
        found: list[dict[str, Any]] = []
        node = schema
        for _ in range(_MAX_REF_HOPS):
            if not isinstance(node, dict):
                break
            found.append(node)
            ref = node.get("$ref")
            if not isinstance(ref, str) or not ref.startswith("#"):
                break
            try:
                node = resolve_pointer(self.root, parse_pointer(ref[1:]))
            except (KeyError, ValueError):
                break
            if any(node is seen for seen in found):
                break
        return found

    def fill(self, schema: Any, instance: Any, depth: int) -> Any:
        if depth > _MAX_REF_HOPS or not isinstance(instance, (dict, list)):
            return instance
        for node in self._resolve(schema):
            instance = self._fill_node(node, instance, depth)
        return instance

    def _fill_node(self, node: dict[str, Any], instance: Any, depth: int) -> Any:
        for branch in node.get("allOf") or ():
            instance = self.fill(branch, instance, depth + 1)
        for key in ("anyOf", "oneOf"):
            branch = self._only_branch(node.get(key), instance)
            if branch is not None:
                instance = self.fill(branch, instance, depth + 1)
        if isinstance(instance, dict):
            return self._fill_object(node, instance, depth)
        return self._fill_array(node, instance, depth)

    def _only_branch(self, branches: Any, instance: Any) -> Any:
        """The one branch whose ``type`` accepts ``instance``, or None (none or ambiguous)."""
        if not isinstance(branches, list):
            return None
        fitting = [b for b in branches if self._type_fits(b, instance)]
        return fitting[0] if len(fitting) == 1 else None

    def _type_fits(self, branch: Any, instance: Any) -> bool:
        types: Any = None
        for node in self._resolve(branch):
            types = node.get("type", types)
        if types is None:
            return branch is not False
        names = [types] if isinstance(types, str) else types if isinstance(types, list) else []
        kinds = tuple(k for n in names if isinstance(n, str) for k in _JSON_TYPES.get(n, ()))
        if isinstance(instance, bool) and bool not in kinds:
            return False
        return isinstance(instance, kinds)

    def _fill_object(self, node: dict[str, Any], instance: dict[str, Any], depth: int) -> Any:
        result = instance
        properties = node.get("properties")
        if isinstance(properties, dict):
            for name, sub in properties.items():
                if name not in result:
                    default = self._default_of(sub)
                    if default is _MISSING:
                        continue
                    result = result if result is not instance else dict(instance)
                    result[name] = copy.deepcopy(default)
                result = self._child(result, instance, name, sub, depth)
        extra = node.get("additionalProperties")
        if isinstance(extra, dict):
            named = properties if isinstance(properties, dict) else {}
            for name in list(result):
                if name not in named:
                    result = self._child(result, instance, name, extra, depth)
        return result

    def _child(self, result: Any, original: Any, key: Any, sub: Any, depth: int) -> Any:
        value = result[key]
        filled = self.fill(sub, value, depth + 1)
        if filled is not value:
            result = result if result is not original else copy.copy(original)
            result[key] = filled
        return result

    def _fill_array(self, node: dict[str, Any], instance: list[Any], depth: int) -> Any:
        result = instance
        prefix = node.get("prefixItems")
        prefix = prefix if isinstance(prefix, list) else []
        for index, sub in enumerate(prefix[: len(instance)]):
            result = self._child(result, instance, index, sub, depth)
        items = node.get("items")
        if isinstance(items, dict):
            for index in range(len(prefix), len(instance)):
                result = self._child(result, instance, index, items, depth)
        return result

    def _default_of(self, schema: Any) -> Any:
        for node in self._resolve(schema):
            if "default" in node:
                return node["default"]
        return _MISSING


_MISSING: Any = object()
