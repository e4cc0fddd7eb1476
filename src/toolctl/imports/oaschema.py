"""OpenAPI schema objects as JSON Schema 2020-12, their ``$ref``s resolved into ``$defs``.

The spec is untrusted input. Only local references (``#/...``) are followed; a remote one
(another file, a URL) raises :class:`ImportRefused`: an import never reads the network or a
file the user did not name. Cycles are fine (a component schema becomes one ``$defs`` entry that
refers to itself); depth and size are bounded, so a hostile spec ends in a clear error.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from toolctl.errors import UsageError
from toolctl.export.convert import LIST_KEYS, MAP_KEYS, ONE_KEYS  # the applicators, once

MAX_DEPTH = 64  # nesting of one schema; a deeper spec is refused, never a RecursionError
MAX_ENUM = 256  # values; a longer enum is dropped (the upstream still checks it) and reported
MAX_DEFS = 500  # component schemas one tool may pull in
# OpenAPI's own formats: no JSON Schema validator checks them, so they would only be noise
_OPENAPI_FORMATS = frozenset({"int32", "int64", "float", "double", "byte", "binary"})
_DROPPED = frozenset({"discriminator", "xml", "externalDocs", "nullable", "example"})
_COMPONENT = "#/components/schemas/"


class ImportRefused(UsageError):
    """A part of the spec that cannot be imported as asked (remote ``$ref``, too deep, ...)."""


def unescape(token: str) -> str:
    """One RFC 6901 reference token, unescaped (also percent-decoding, as URI fragments are)."""
    from urllib.parse import unquote

    return unquote(token).replace("~1", "/").replace("~0", "~")


def resolve_pointer(doc: Any, ref: str) -> Any:
    """The value ``ref`` (``#/a/b``) names in ``doc``; :class:`ImportRefused` for a remote or
    dangling reference."""
    if not isinstance(ref, str) or not ref.startswith("#"):
        raise ImportRefused(
            f"$ref {str(ref)[:200]!r} points outside the spec",
            hint="remote and file references are not followed (an import reads no network "
            "and no other file): bundle the spec into one file first",
        )
    node = doc
    for token in ref[1:].split("/")[1:] if ref != "#" else []:
        key = unescape(token)
        if isinstance(node, dict) and key in node:
            node = node[key]
        elif isinstance(node, list) and key.isdigit() and int(key) < len(node):
            node = node[int(key)]
        else:
            raise ImportRefused(f"$ref {ref[:200]!r} names nothing in the spec")
    return node


def deref(doc: Any, node: Any) -> Any:
    """``node`` with a chain of ``$ref``s followed (parameters, bodies, responses): a cycle
    raises :class:`ImportRefused`."""
    seen: set[str] = set()
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        if ref in seen or len(seen) > 32:
            raise ImportRefused(f"$ref {str(ref)[:200]!r} refers to itself")
        seen.add(ref)
        node = resolve_pointer(doc, ref)
    return node


@dataclass
class SchemaConverter:
    """Converts the schemas of one tool: component references go to ``defs`` by name."""

    doc: dict[str, Any]
    openapi30: bool
    defs: dict[str, Any] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)
    _names: dict[str, str] = field(default_factory=dict)  # component ref -> $defs name

    def convert(self, schema: Any, where: str) -> Any:
        """``schema`` as 2020-12 (a new object); referenced components land in :attr:`defs`."""
        return self._node(schema, where, 0)

    def finish(self, schema: Any) -> Any:
        """``schema`` with the ``$defs`` it needs (call once per root schema)."""
        if not self.defs or not isinstance(schema, dict):
            return schema
        out = dict(schema)
        out["$defs"] = {**out.get("$defs", {}), **self.defs}
        return out

    def _ref(self, ref: Any, depth: int) -> dict[str, Any]:
        if (
            isinstance(ref, str)
            and ref.startswith(_COMPONENT)
            and "/" not in ref[len(_COMPONENT) :]
        ):
            name = self._names.get(ref)
            if name is None:
                name = self._def_name(unescape(ref[len(_COMPONENT) :]))
                self._names[ref] = name
                if len(self._names) > MAX_DEFS:
                    raise ImportRefused(f"more than {MAX_DEFS} component schemas in one tool")
                self.defs[name] = {}  # reserved first: a cycle through it finds the name
                self.defs[name] = self._node(resolve_pointer(self.doc, ref), ref, depth + 1)
            return {"$ref": f"#/$defs/{name}"}
        # any other local pointer (into paths, parameters...): inlined, once per chain
        target = resolve_pointer(self.doc, ref)
        if depth > MAX_DEPTH:
            raise ImportRefused(f"$ref {str(ref)[:200]!r} nests deeper than {MAX_DEPTH} levels")
        converted = self._node(target, str(ref), depth + 1)
        return converted if isinstance(converted, dict) else {}

    def _def_name(self, component: str) -> str:
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", component) or "schema"
        name, n = base, 2
        taken = set(self.defs)
        while name in taken:
            name, n = f"{base}_{n}", n + 1
        return name

    def _node(self, schema: Any, where: str, depth: int) -> Any:
        if depth > MAX_DEPTH:
            raise ImportRefused(f"schema at {where} nests deeper than {MAX_DEPTH} levels")
        if isinstance(schema, bool):
            return schema
        if not isinstance(schema, dict):
            return {}
        if "$ref" in schema:
            ref = self._ref(schema["$ref"], depth)
            siblings = {k: v for k, v in schema.items() if k != "$ref"}
            if self.openapi30 or not siblings:  # 3.0 ignores a $ref's siblings
                return ref
            rest = self._node(siblings, where, depth + 1)
            return {**rest, **ref} if isinstance(rest, dict) else ref
        out: dict[str, Any] = {}
        for key, value in schema.items():
            if key in _DROPPED or key.startswith("x-"):
                continue
            if key in MAP_KEYS and isinstance(value, dict):
                out[key] = {
                    k: self._node(v, f"{where}/{key}/{k}", depth + 1) for k, v in value.items()
                }
            elif key in LIST_KEYS and isinstance(value, list):
                out[key] = [self._node(v, f"{where}/{key}", depth + 1) for v in value]
            elif key in ONE_KEYS and isinstance(value, (dict, bool)):
                out[key] = self._node(value, f"{where}/{key}", depth + 1)
            elif key == "items" and isinstance(value, list):  # draft-04 tuples, seen in the wild
                out["prefixItems"] = [self._node(v, f"{where}/items", depth + 1) for v in value]
            elif key == "format" and value in _OPENAPI_FORMATS:
                continue
            elif key == "format" and value == "password":
                out["writeOnly"] = True  # a password is a secret: redacted like one
            else:
                out[key] = value
        self._numeric_bounds(out, schema)
        if "example" in schema and "examples" not in out:
            out["examples"] = [schema["example"]]
        if isinstance(out.get("enum"), list) and len(out["enum"]) > MAX_ENUM:
            self.notes.append(
                f"{where}: enum of {len(out['enum'])} values dropped (over {MAX_ENUM}); "
                "the API still checks it"
            )
            del out["enum"]
        if self.openapi30 and schema.get("nullable") is True:
            return _nullable(out)
        return out

    def _numeric_bounds(self, out: dict[str, Any], schema: dict[str, Any]) -> None:
        """3.0's boolean ``exclusiveMinimum``/``exclusiveMaximum`` as 2020-12 numbers."""
        for flag, bound in (("exclusiveMinimum", "minimum"), ("exclusiveMaximum", "maximum")):
            value = schema.get(flag)
            if isinstance(value, bool):
                del out[flag]
                if value and isinstance(schema.get(bound), (int, float)):
                    out[flag] = out.pop(bound)


def _nullable(out: dict[str, Any]) -> dict[str, Any]:
    """A 3.0 ``nullable: true`` schema as 2020-12: ``null`` added to ``type`` (and ``enum``)."""
    kind = out.get("type")
    if isinstance(kind, str):
        out["type"] = [kind, "null"]
    elif isinstance(kind, list) and "null" not in kind:
        out["type"] = [*kind, "null"]
    elif kind is None:
        return {"anyOf": [out, {"type": "null"}]} if out else out
    if isinstance(out.get("enum"), list) and None not in out["enum"]:
        out["enum"] = [*out["enum"], None]
    return out
