"""Where a schema marks secrets: the one walk behind redaction, scrubbing and pruning.

A location of a JSON value is *sensitive* when any schema that applies to it carries
``x-sensitive: true`` or ``writeOnly: true``. Which schemas apply is worked out under every JSON
Schema 2020-12 applicator (and the draft-07/2019-09 forms toolctl accepts):

* in place (same value): ``allOf``/``anyOf``/``oneOf``/``not``, ``if``/``then``/``else``,
  ``dependentSchemas`` (and draft-07 ``dependencies``), ``$ref``, ``$dynamicRef``,
  ``$recursiveRef``;
* an object member: ``properties``, ``patternProperties``, ``additionalProperties``,
  ``unevaluatedProperties`` (``propertyNames`` constrains names, not values: never a location);
* an array item: ``prefixItems``, ``items`` (and draft-07 tuple ``items`` with
  ``additionalItems``), ``contains``, ``unevaluatedItems``.

References are followed in every local form: ``#/json/pointer`` (percent-encoded and ``~0``/``~1``
escaped), ``#anchor`` (``$anchor``), ``$dynamicRef`` to a ``$dynamicAnchor``, and the
``#/$defs/...`` references the loader writes for bundled schema files. Where the answer depends on
something the walk cannot decide cheaply (an anchor defined twice, a pattern that cannot be
evaluated, ``contains``, ``unevaluated*``), it errs towards *sensitive*: a redacted non-secret
costs a ``[REDACTED]``, a missed secret costs the secret.

This module is pure (no I/O, no logging); :mod:`toolctl.runtime.redact` builds on it, and the
MCP export and server use :func:`shown_schema` / :meth:`SensitiveMap.prune`.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import unquote

from toolctl.runtime.memo import PerObject
from toolctl.schema import NOT_SCHEMAS

_IN_PLACE_LISTS = ("allOf", "anyOf", "oneOf")
_IN_PLACE_ONE = ("not", "if", "then", "else")
_IN_PLACE_MAPS = ("dependentSchemas", "dependencies")
_ANCHOR_KEYS = ("$anchor", "$dynamicAnchor")
MAX_HOPS = 10_000  # in-place schemas followed for one location (a cycle guard on top of `seen`)


def is_flagged(schema: Any) -> bool:
    """True when ``schema`` itself carries ``x-sensitive: true`` or ``writeOnly: true``."""
    return type(schema) is dict and (
        schema.get("x-sensitive") is True or schema.get("writeOnly") is True
    )


def _schema_nodes(root: Any) -> Iterator[dict[str, Any]]:
    """Every schema object in ``root`` (not inside ``const``/``enum``/``default``/``examples``),
    iteratively: a deep schema must not exhaust the stack."""
    stack: list[Any] = [root]
    while stack:
        node = stack.pop()
        if type(node) is dict:
            yield node
            stack.extend(v for k, v in node.items() if k not in NOT_SCHEMAS)
        elif type(node) is list:
            stack.extend(node)


def _pattern_matches(pattern: Any, key: str) -> bool:
    """Whether ``patternProperties`` key ``pattern`` matches ``key``; True when it cannot be
    told (a pattern that does not compile or takes too long)."""
    if not isinstance(pattern, str):
        return True
    from toolctl.schema import pattern_search

    try:
        return pattern_search(pattern, key)
    except Exception:  # undecidable: treat as applying (redact more, not less)
        return True


class SensitiveMap:
    """The sensitive locations of one (bundled) schema ``root``.

    ``any`` is False for the common schema without a flag: callers then skip the walk.
    """

    def __init__(self, root: Any) -> None:
        self.root = root
        self._anchors: dict[str, list[Any]] = {}
        self.any = False
        for node in _schema_nodes(root):
            if is_flagged(node):
                self.any = True
            for key in _ANCHOR_KEYS:
                name = node.get(key)
                if isinstance(name, str):
                    self._anchors.setdefault(name, []).append(node)
        self._closures: dict[int, list[dict[str, Any]]] = {}
        self._may_flag: dict[int, bool] = {}

    # ------------------------------------------------------------ references

    def _resolve(self, ref: Any, keyword: str) -> list[Any]:
        """The schemas a reference names inside ``root`` (none when it names nothing)."""
        if not isinstance(ref, str):
            return []
        base = self.root.get("$id") if isinstance(self.root, dict) else None
        if isinstance(base, str) and ref.startswith(base.rstrip("#")):
            ref = ref[len(base.rstrip("#")) :]  # the root's own absolute URI
        if keyword == "$recursiveRef" or ref in ("", "#"):
            return [self.root]
        if not ref.startswith("#"):
            return []  # bundled schemas have none; anything else is never fetched
        fragment = ref[1:]
        decoded = unquote(fragment)
        if decoded.startswith("/"):
            return self._pointers(fragment, decoded)
        return list(self._anchors.get(decoded, ()))

    def _pointers(self, fragment: str, decoded: str) -> list[Any]:
        # "%2F" may mean a slash inside one token or a separator: follow both readings.
        found: list[Any] = []
        for tokens in (
            [unquote(t) for t in fragment.lstrip("/").split("/")],
            decoded[1:].split("/"),
        ):
            node: Any = self.root
            for token in tokens:
                token = token.replace("~1", "/").replace("~0", "~")
                if isinstance(node, dict) and token in node:
                    node = node[token]
                elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
                    node = node[int(token)]
                else:
                    node = None
                    break
            if node is not None and not any(node is f for f in found):
                found.append(node)
        return found

    # ------------------------------------------------------------ applicators

    def in_place(self, schema: Any) -> list[dict[str, Any]]:
        """``schema`` and every schema that applies to the same value (memoised per node)."""
        if type(schema) is not dict:
            return []
        found = self._closures.get(id(schema))
        if found is None:
            found = self._closure(schema)
            self._closures[id(schema)] = found
        return found

    def _closure(self, schema: dict[str, Any]) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        seen: set[int] = set()
        stack: list[Any] = [schema]
        while stack and len(out) < MAX_HOPS:
            node = stack.pop()
            if type(node) is not dict or id(node) in seen:
                continue
            seen.add(id(node))
            out.append(node)
            stack.extend(self._in_place_children(node))
        return out

    def _in_place_children(self, node: dict[str, Any]) -> Iterator[Any]:
        for key in _IN_PLACE_LISTS:
            if isinstance(node.get(key), list):
                yield from node[key]
        for key in _IN_PLACE_ONE:
            if key in node:
                yield node[key]
        for key in _IN_PLACE_MAPS:
            if isinstance(node.get(key), dict):
                yield from node[key].values()
        for key in ("$ref", "$dynamicRef", "$recursiveRef"):
            if key in node:
                yield from self._resolve(node[key], key)

    def may_flag(self, schema: Any) -> bool:
        """Whether a flag, or a reference (which may lead to one), is anywhere inside
        ``schema``: a cheap test before evaluating a ``patternProperties`` pattern (memoised)."""
        found = self._may_flag.get(id(schema))
        if found is None:
            found = any(
                is_flagged(node) or any(k in node for k in ("$ref", "$dynamicRef", "$recursiveRef"))
                for node in _schema_nodes(schema)
            )
            self._may_flag[id(schema)] = found
        return found

    def flagged(self, schemas: list[Any]) -> bool:
        """True when a value that ``schemas`` apply to is sensitive."""
        return any(is_flagged(s) for schema in schemas for s in self.in_place(schema))

    def children(self, schemas: list[Any], key: str | int) -> list[Any]:
        """The schemas that apply to member ``key`` (or item ``key``) of a value that
        ``schemas`` apply to."""
        out: list[Any] = []
        for schema in schemas:
            for node in self.in_place(schema):
                if isinstance(key, str):
                    out.extend(_member_schemas(node, key, self.may_flag))
                else:
                    out.extend(_item_schemas(node, key))
        return out

    # ------------------------------------------------------------ values

    def values(self, value: Any) -> list[Any]:
        """The values at sensitive locations inside ``value`` (each taken whole)."""
        out: list[Any] = []
        if self.any:
            self._values(value, [self.root], out)
        return out

    def _values(self, value: Any, schemas: list[Any], out: list[Any]) -> None:
        stack: list[tuple[Any, list[Any]]] = [(value, schemas)]
        while stack:
            item, subs = stack.pop()
            if not subs:
                continue
            if self.flagged(subs):
                out.append(item)
            elif isinstance(item, dict):
                stack.extend((v, self.children(subs, k)) for k, v in item.items())
            elif isinstance(item, list):
                stack.extend((v, self.children(subs, i)) for i, v in enumerate(item))

    def prune(self, value: Any) -> Any:
        """A copy of ``value`` without the members and items at sensitive locations: what a
        model or an MCP client may see. The root itself sensitive: ``None``."""
        if not self.any:
            return value
        if self.flagged([self.root]):
            return None
        return self._prune(value, [self.root], 0)

    def _prune(self, value: Any, schemas: list[Any], depth: int) -> Any:
        if not schemas or depth > 512:  # deeper than any JSON the runtime accepts
            return value
        if isinstance(value, dict):
            out: dict[str, Any] = {}
            for key, item in value.items():
                subs = self.children(schemas, key)
                if not self.flagged(subs):
                    out[key] = self._prune(item, subs, depth + 1)
            return out
        if isinstance(value, list):
            kept = []
            for i, item in enumerate(value):
                subs = self.children(schemas, i)
                if not self.flagged(subs):
                    kept.append(self._prune(item, subs, depth + 1))
            return kept
        return value


def _member_schemas(node: dict[str, Any], key: str, may_flag: Callable[[Any], bool]) -> list[Any]:
    out: list[Any] = []
    props = node.get("properties")
    named = isinstance(props, dict) and key in props
    if named:
        out.append(props[key])  # type: ignore[index]
    patterns = node.get("patternProperties")
    matched = False
    if isinstance(patterns, dict):
        for pattern, sub in patterns.items():
            if may_flag(sub) and _pattern_matches(pattern, key):
                out.append(sub)
                matched = True
    if not named and not matched:
        for keyword in ("additionalProperties", "unevaluatedProperties"):
            if type(node.get(keyword)) is dict:
                out.append(node[keyword])
    return out


def _item_schemas(node: dict[str, Any], index: int) -> list[Any]:
    out: list[Any] = []
    prefix, items = node.get("prefixItems"), node.get("items")
    tuple_len = 0
    if isinstance(prefix, list):
        tuple_len = len(prefix)
        if index < tuple_len:
            out.append(prefix[index])
        elif type(items) is dict:
            out.append(items)
    elif isinstance(items, list):  # draft-07 tuple form
        tuple_len = len(items)
        if index < tuple_len:
            out.append(items[index])
        elif type(node.get("additionalItems")) is dict:
            out.append(node["additionalItems"])
    elif type(items) is dict:
        out.append(items)
    if type(node.get("contains")) is dict:
        out.append(node["contains"])  # which items match is not worked out: all may
    if type(node.get("unevaluatedItems")) is dict and index >= tuple_len:
        out.append(node["unevaluatedItems"])
    return out


# ---------------------------------------------------------------- schemas shown to clients

_MAPS: PerObject[Any, SensitiveMap] = PerObject(SensitiveMap)
_SHOWN: PerObject[Any, Any] = PerObject(lambda schema: _shown(schema))


def sensitive_map(schema: Any) -> SensitiveMap:
    """The :class:`SensitiveMap` of ``schema``, built once per schema object (specs are
    frozen)."""
    return _MAPS(schema)


def shown_schema(schema: Any) -> Any:
    """``schema`` as an MCP client sees it: the properties :meth:`SensitiveMap.prune` removes
    from a value are removed from the schema too (and from ``required``), so the pruned
    ``structuredContent`` still validates. ``schema`` is not modified (the copy is made once
    per schema object)."""
    return _SHOWN(schema)


def _shown(schema: Any) -> Any:
    found = sensitive_map(schema)
    if not found.any:
        return schema
    out = copy.deepcopy(schema)
    shown = SensitiveMap(out)
    for node in list(_schema_nodes(out)):
        _drop_flagged(node, shown)
    return out


def _drop_flagged(node: dict[str, Any], found: SensitiveMap) -> None:
    props = node.get("properties")
    if isinstance(props, dict):
        hidden = [k for k, sub in props.items() if found.flagged([sub])]
        for key in hidden:
            del props[key]
        if hidden and isinstance(node.get("required"), list):
            node["required"] = [k for k in node["required"] if k not in hidden]
    items = [node.get("items"), node.get("additionalItems"), node.get("unevaluatedItems")]
    if any(found.flagged([s]) for s in items if type(s) is dict):
        # Its items are removed from the value: an array bound would no longer hold.
        for key in ("minItems", "contains", "minContains"):
            node.pop(key, None)
