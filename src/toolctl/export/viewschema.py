"""The JSON Schema of a transformed view of the output, where a declarative transform allows it.

A background tool's result reaches an MCP client from the run history, which keeps the
transcript form of the output (``transform.transcript.output``), never the raw output. So the
``outputSchema`` MCP lists for such a tool must describe the transcript form: the declared
schema with the fields ``pick`` leaves out and ``omit`` drops removed (and ``redact``-ed fields
accepting the placeholder). A transform whose result no schema can predict (``template``,
``call``, ``suppress``) or a schema shape the edit cannot follow (``$ref``, ``allOf``... on the
path) gives ``None``: the tool is then listed without an ``outputSchema``.
"""

from __future__ import annotations

from typing import Any

from toolctl.fieldpaths import Tree, path_tree

_UNKNOWN = None
# Keywords that combine or reference subschemas: an edit cannot follow a path through them.
_OPAQUE = ("$ref", "$dynamicRef", "allOf", "anyOf", "oneOf", "not", "if", "patternProperties")


def _tree(paths: Any) -> Tree | None:
    """Dotted paths as a tree (an empty subtree: the whole field); None for a bad list."""
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        return None
    return path_tree(tuple(paths))


def view_schema(transform: dict[str, Any] | None, schema: Any) -> Any:
    """The schema of ``schema``'s instances after the declarative ``transform``; None when it
    cannot be known."""
    if not transform:
        return schema
    if not isinstance(schema, dict) or any(k in transform for k in ("call", "template")):
        return _UNKNOWN
    if transform.get("suppress") is True:
        return _UNKNOWN
    out: Any = schema
    for key, edit in (("pick", _pick), ("omit", _omit), ("redact", _redact)):
        if key in transform:
            tree = _tree(transform[key])
            if tree is None or out is None:
                return _UNKNOWN
            out = edit(out, tree)
    return out


def _follow(schema: Any) -> tuple[str, dict[str, Any]] | None:
    """``("object", schema)`` or ``("array", schema)`` when an edit may go into ``schema``."""
    if not isinstance(schema, dict) or any(k in schema for k in _OPAQUE):
        return None
    if schema.get("type") == "array" and isinstance(schema.get("items"), dict):
        return "array", schema
    if isinstance(schema.get("properties"), dict):
        return "object", schema
    return None


def _pick(schema: Any, tree: Tree) -> Any:
    if not tree:
        return schema
    shape = _follow(schema)
    if shape is None:
        return _UNKNOWN
    kind, node = shape
    if kind == "array":
        items = _pick(node["items"], tree)
        return None if items is None else {**node, "items": items}
    props: dict[str, Any] = {}
    for key, sub in tree.items():
        if key in node["properties"]:
            picked = _pick(node["properties"][key], sub)
            if picked is None:
                return _UNKNOWN
            props[key] = picked
    return _with(node, props)


def _omit(schema: Any, tree: Tree) -> Any:
    shape = _follow(schema)
    if shape is None:
        return _UNKNOWN
    kind, node = shape
    if kind == "array":
        if any(k.isdigit() for k in tree):  # by index: the items left cannot be told apart
            return _UNKNOWN
        items = _omit(node["items"], tree)
        return None if items is None else {**node, "items": items}
    props = dict(node["properties"])
    for key, sub in tree.items():
        if key not in props:
            continue
        if not sub:
            del props[key]
            continue
        edited = _omit(props[key], sub)
        if edited is None:
            return _UNKNOWN
        props[key] = edited
    return _with(node, props)


def _redact(schema: Any, tree: Tree) -> Any:
    # A redacted field holds the placeholder string: any value is accepted there.
    shape = _follow(schema)
    if shape is None:
        return _UNKNOWN
    kind, node = shape
    if kind == "array":
        items = _redact(node["items"], tree)
        return None if items is None else {**node, "items": items}
    props = dict(node["properties"])
    for key, sub in tree.items():
        if key in props:
            edited = _redact(props[key], sub) if sub else {}
            if edited is None:
                return _UNKNOWN
            props[key] = edited
    return {**node, "properties": props}


def _with(node: dict[str, Any], props: dict[str, Any]) -> dict[str, Any]:
    out = {**node, "properties": props}
    required = node.get("required")
    if isinstance(required, list):
        out["required"] = [r for r in required if r in props]
        if not out["required"]:
            del out["required"]
    return out
