"""One schema walker for every target: keyword subsets, ``$ref`` inlining, strict conversion.

A :class:`Profile` says what a target accepts; :func:`convert` rewrites a tool schema for it and
reports each change through :class:`~toolctl.export.base.Findings`, located at the JSON path in the
declaration it came from (a ``$ref`` target is reported where its ``$defs`` entry is written).

Codes: TX300 ``$ref`` inlined or unresolvable, TX301 recursion the target forbids, TX302 keyword
dropped, TX303 keyword loosened, TX310 allOf that cannot be merged, TX311 open object under strict
mode, TX312 a schema strict mode cannot type, TX320 optional property made nullable and required,
TX330 a strict-mode limit exceeded.
"""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from typing import Any

from toolctl.diagnostics import Severity
from toolctl.export.base import Findings, JsonPath
from toolctl.export.limits import check_openai_limits
from toolctl.export.merge import ANNOTATIONS, MergeError, merge_all_of
from toolctl.refs import parse_pointer, resolve_pointer

MAP_KEYS = ("properties", "patternProperties", "dependentSchemas", "$defs", "definitions")
LIST_KEYS = ("allOf", "anyOf", "oneOf", "prefixItems")
ONE_KEYS = (
    "items",
    "additionalProperties",
    "not",
    "if",
    "then",
    "else",
    "contains",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
)
# keyword -> how it holds subschemas (a mapping of them, a list, or one)
_SUBSCHEMAS = {
    **dict.fromkeys(MAP_KEYS, "map"),
    **dict.fromkeys(LIST_KEYS, "list"),
    **dict.fromkeys(ONE_KEYS, "one"),
}
_SUBSCHEMA_KEYS = frozenset(_SUBSCHEMAS)
MAX_NODES = 100_000  # inlining fan-out guard (the OpenAI Agents SDK uses the same bound)
_TYPED = ("type", "enum", "const", "anyOf", "oneOf", "allOf", "$ref")


@dataclass(frozen=True)
class Profile:
    """What one target accepts in a parameters schema."""

    target: str
    keywords: frozenset[str] | None = None  # None: every keyword passes
    inline_refs: bool = False
    recursion: bool = True
    strict: str | None = None  # "openai" or "anthropic"
    const_to_enum: bool = False
    formats: frozenset[str] | None = None
    max_min_items: int | None = None
    describe_dropped: bool = False

    @functools.cached_property
    def passes_through(self) -> bool:
        """True when this profile changes nothing (every field at its default)."""
        return self == Profile(self.target)

    @functools.cached_property
    def loud_keys(self) -> frozenset[str] | None:
        """Keywords that may make the walker change or report a node; None: every node may.

        A node holding none of them, whose keywords all pass, comes back unchanged and without
        findings (see ``_Walker.node``): most leaves, for most profiles.
        """
        if self.strict:
            return None
        return _SUBSCHEMA_KEYS | {"$ref", "allOf", "const", "oneOf", "format", "minItems"}


def _nullable_already(s: Any) -> bool:
    if not isinstance(s, dict):
        return s is True
    t = s.get("type")
    if t == "null" or (isinstance(t, list) and "null" in t):
        return True
    if "enum" in s and "type" not in s:
        return None in s["enum"]
    return any(_nullable_already(b) for b in s.get("anyOf", ()))


def make_nullable(s: dict[str, Any]) -> dict[str, Any]:
    """``s`` that also accepts ``null`` (type union where possible, else an ``anyOf``)."""
    if _nullable_already(s):
        return s
    t = s.get("type")
    if isinstance(t, (str, list)) and not any(k in s for k in ("anyOf", "oneOf", "$ref")):
        out = dict(s, type=[*([t] if isinstance(t, str) else t), "null"])
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    if "enum" in s and not any(k in s for k in ("anyOf", "oneOf", "$ref")):
        return dict(s, enum=[*s["enum"], None])
    if "anyOf" in s and "$ref" not in s:
        return dict(s, anyOf=[*s["anyOf"], {"type": "null"}])
    return {"anyOf": [s, {"type": "null"}]}


def _short(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


class _Unresolved(Exception):
    """A ``$ref`` in an allOf branch points nowhere (already reported)."""


class _Walker:
    def __init__(
        self, root: dict[str, Any], profile: Profile, out: Findings, base: JsonPath
    ) -> None:
        self.root = root
        self.p = profile
        self.out = out
        self.base = base
        self.nodes = 0
        self.failed = False

    # ------------------------------------------------------------------ helpers

    def fail(self, code: str, message: str, path: JsonPath, hint: str | None = None) -> None:
        self.failed = True
        self.out.error(code, f"{message} ({self.p.target})", path, hint)

    def resolve(self, ref: str, path: JsonPath) -> tuple[Any, JsonPath] | None:
        try:
            tokens = parse_pointer(ref[1:]) if ref.startswith("#") else None
            if tokens is None:
                raise KeyError(ref)
            return resolve_pointer(self.root, tokens), (*self.base, *tokens)
        except (KeyError, ValueError):
            self.fail(
                "TX300", f"$ref {ref!r} cannot be resolved inside the schema", (*path, "$ref")
            )
            return None

    def inline(self, node: dict[str, Any], path: JsonPath, stack: tuple[str, ...]) -> Any:
        """Replace ``node``'s ``$ref`` by its (converted) target, siblings merged in."""
        ref = node["$ref"]
        if ref in stack and self.p.recursion and not self.p.inline_refs:
            extra = sorted(k for k in node if k != "$ref")
            lossy = any(k not in ANNOTATIONS for k in extra)
            self.out.add(
                Severity.WARNING if lossy else Severity.INFO,
                "TX302",
                f"dropped {extra} next to the recursive $ref {ref!r} "
                f"({self.p.target} does not allow keywords beside a reference)",
                (*path, "$ref"),
            )
            return {"$ref": ref}
        if ref in stack:
            self.fail(
                "TX301",
                f"$ref {ref!r} is recursive and this target cannot express recursion",
                (*path, "$ref"),
                hint="make the recursive part a string (e.g. JSON text) or bound its depth "
                "with explicit levels",
            )
            return {}
        found = self.resolve(ref, path)
        if found is None:
            return {}
        target, tpath = found
        siblings = {k: v for k, v in node.items() if k != "$ref"}
        if self.p.inline_refs:
            self.out.info(
                "TX300",
                f"$ref {ref!r} inlined (the target does not follow references)",
                (*path, "$ref"),
            )
        if not isinstance(target, dict):
            return self.node(target, tpath, (*stack, ref))
        if siblings:
            try:
                target = merge_all_of(siblings, [target])
            except MergeError as exc:
                self.fail(
                    "TX310", f"$ref {ref!r} and its sibling keywords cannot be merged: {exc}", path
                )
                return {}
        return self.node(target, tpath if not siblings else path, (*stack, ref))

    def drop(
        self, node: dict[str, Any], key: str, path: JsonPath, why: str, described: list[str]
    ) -> None:
        value = node.pop(key)
        if key in ANNOTATIONS or key.startswith("x-"):
            self.out.info("TX302", f"dropped {key!r} ({why})", (*path, key))
            if key == "default":
                described.append(f"default: {_short(value)}")
            return
        if self.p.describe_dropped and not isinstance(value, (dict, list)):
            described.append(f"{key}: {_short(value)}")
        self.out.warning(
            "TX302",
            f"dropped {key!r} = {_short(value)} ({why})",
            (*path, key),
            hint="the runtime still validates it; the model is not held to it",
        )

    # ------------------------------------------------------------------ the walk

    def node(self, node: Any, path: JsonPath, stack: tuple[str, ...]) -> Any:
        self.nodes += 1
        if self.nodes > MAX_NODES:
            if self.nodes == MAX_NODES + 1:
                self.fail("TX330", f"the schema expands to more than {MAX_NODES} nodes", path)
            return {}
        if isinstance(node, bool):
            if self.p.strict and node is True:
                self.fail(
                    "TX312",
                    "'true' accepts any JSON value; strict mode needs a type",
                    path,
                    hint="give the value a type (or a union of types)",
                )
            return node
        if not isinstance(node, dict):
            return node
        loud, kept = self.p.loud_keys, self.p.keywords
        if loud is not None and loud.isdisjoint(node) and (kept is None or node.keys() <= kept):
            return node  # nothing below applies to it (Profile.loud_keys): the common leaf
        if "$ref" in node and (self.p.inline_refs or len(node) > 1):
            return self.inline(node, path, stack)
        # Copy-on-write: ``work`` is the input node until a step changes it; only then is it
        # copied (once), so an unchanged subtree comes back as the very object that went in.
        work, owned = node, False
        if "allOf" in work and (self.p.strict or not self._allowed("allOf")):
            merged = self.merge(work, path, stack)
            if merged is None:
                return {}
            work, owned = merged, True  # merge builds a new mapping
        if self._loosens(work):
            work, owned = (work if owned else dict(work)), True
            self.loosen(work, path)
        # most nodes are leaves: one set test in C instead of a loop over their keys
        changed = {} if _SUBSCHEMA_KEYS.isdisjoint(work) else self._children(work, path, stack)
        if changed:
            work = work if owned else dict(work)
            work.update(changed)
            owned = True
        if self.p.strict:
            work, owned = (work if owned else dict(work)), True
            self.strict_node(work, path)
        drops = self._drops(work)
        if drops:
            work = work if owned else dict(work)
            self.filter(work, path, drops)
        return work

    def _children(
        self, node: dict[str, Any], path: JsonPath, stack: tuple[str, ...]
    ) -> dict[str, Any]:
        """The subschema keywords whose converted value differs from ``node``'s (new objects)."""
        changed: dict[str, Any] = {}
        for key, sub in node.items():
            kind = _SUBSCHEMAS.get(key)
            # a boolean additionalProperties is the object's own business (strict_node)
            flag = key in ("additionalProperties", "unevaluatedProperties")
            if kind is None or not self._descend(key) or (flag and isinstance(sub, bool)):
                continue
            if kind == "map" and isinstance(sub, dict):
                done = {n: self.node(s, (*path, key, n), stack) for n, s in sub.items()}
                if any(done[n] is not s for n, s in sub.items()):
                    changed[key] = done
            elif kind != "map" and isinstance(sub, list):
                items = [self.node(s, (*path, key, i), stack) for i, s in enumerate(sub)]
                if any(a is not b for a, b in zip(items, sub, strict=True)):
                    changed[key] = items
            elif kind == "one":
                one = self.node(sub, (*path, key), stack)
                if one is not sub:
                    changed[key] = one
        return changed

    def _allowed(self, key: str) -> bool:
        return self.p.keywords is None or key in self.p.keywords

    def _descend(self, key: str) -> bool:
        """Walk into a keyword's subschemas only when they stay in the output."""
        if key in ("$defs", "definitions"):
            return not self.p.inline_refs
        return self._allowed(key)

    def merge(self, node: dict[str, Any], path: JsonPath, stack: tuple[str, ...]) -> Any:
        """``node`` with its allOf merged in; None when strict mode must refuse it."""
        rest = {k: v for k, v in node.items() if k != "allOf"}
        try:
            branches = [
                self._deref_branch(b, (*path, "allOf", i), stack)
                for i, b in enumerate(node["allOf"])
            ]
            merged = merge_all_of(node, branches)
        except _Unresolved:
            return rest
        except MergeError as exc:
            why = f"allOf cannot be merged into one schema: {exc}"
            if self.p.strict:
                hint = "rewrite the allOf as one object schema"
                self.fail("TX310", why, (*path, "allOf"), hint=hint)
                return None
            self.out.warning("TX310", f"{why}; dropped ({self.p.target})", (*path, "allOf"))
            return rest
        self.out.info("TX303", f"allOf merged into one schema ({self.p.target})", (*path, "allOf"))
        return merged

    def _deref_branch(self, branch: Any, path: JsonPath, stack: tuple[str, ...]) -> Any:
        """An allOf branch with its ``$ref`` chain followed (a recursive one is left as is)."""
        seen = set(stack)
        while isinstance(branch, dict) and "$ref" in branch and branch["$ref"] not in seen:
            seen.add(branch["$ref"])
            found = self.resolve(branch["$ref"], path)
            if found is None:
                raise _Unresolved
            siblings = {k: v for k, v in branch.items() if k != "$ref"}
            branch = merge_all_of(siblings, [found[0]]) if siblings else found[0]
        return branch

    def _loosens(self, node: dict[str, Any]) -> bool:
        """Whether :meth:`loosen` has anything to rewrite in ``node``."""
        return ("const" in node and self.p.const_to_enum) or (
            "oneOf" in node and not self._allowed("oneOf") and self._allowed("anyOf")
        )

    def loosen(self, node: dict[str, Any], path: JsonPath) -> None:
        """Rewrites that keep or barely change meaning: const → enum, oneOf → anyOf."""
        if "const" in node and self.p.const_to_enum:
            value = node.pop("const")
            node["enum"] = [v for v in node.get("enum", [value]) if v == value] or [value]
        if "oneOf" in node and not self._allowed("oneOf") and self._allowed("anyOf"):
            if "anyOf" in node:
                if self.p.strict:
                    self.fail("TX310", "oneOf next to anyOf cannot be expressed", (*path, "oneOf"))
                return
            node["anyOf"] = node.pop("oneOf")
            self.out.warning(
                "TX303",
                f"oneOf loosened to anyOf ({self.p.target}): a value "
                "matching several branches is no longer rejected",
                (*path, "oneOf"),
            )

    def _drops(self, node: dict[str, Any]) -> list[tuple[str, str]]:
        """(keyword, why) for each keyword of ``node`` this target cannot take (read-only)."""
        kept = self.p.keywords
        if (
            (kept is None or node.keys() <= kept)
            and "format" not in node
            and "minItems" not in node
        ):
            return []  # the common case: nothing below can apply
        drops = (
            []
            if kept is None or node.keys() <= kept  # the common case, without a loop
            else [
                (key, f"not supported by {self.p.target}")
                for key in node
                if key not in kept and not (self.p.inline_refs and key in ("$defs", "definitions"))
            ]
        )
        fmt, mi, top = node.get("format"), node.get("minItems"), self.p.max_min_items
        formats = self.p.formats
        unknown_format = fmt is not None and formats is not None and fmt not in formats
        if unknown_format and self._allowed("format"):
            drops.append(("format", f"format {fmt!r} is not supported by {self.p.target}"))
        if top is not None and isinstance(mi, int) and mi > top and self._allowed("minItems"):
            drops.append(("minItems", f"{self.p.target} allows minItems of at most {top}"))
        return drops

    def filter(self, node: dict[str, Any], path: JsonPath, drops: list[tuple[str, str]]) -> None:
        """Drop ``drops`` from ``node`` (a copy the walker owns), noting them in its description."""
        described: list[str] = []
        for key, why in drops:
            self.drop(node, key, path, why, described)
        if described:
            note = "{" + ", ".join(described) + "}"
            desc = node.get("description")
            node["description"] = f"{desc}\n\n{note}" if desc else note

    # ------------------------------------------------------------------ strict mode

    def strict_node(self, node: dict[str, Any], path: JsonPath) -> None:
        if not any(k in node for k in _TYPED):
            self.fail(
                "TX312",
                "this schema accepts any JSON value; strict mode needs a type",
                path,
                hint="add a 'type' (or an enum/anyOf)",
            )
            return
        t = node.get("type")
        types = [t] if isinstance(t, str) else list(t or [])
        if "array" in types and "items" not in node:
            self.fail(
                "TX312",
                "an array without 'items' accepts any values; strict mode needs their type",
                path,
                hint="add 'items' with a type",
            )
        if not ("properties" in node or "object" in types):
            return
        open_why = None
        if "patternProperties" in node:
            open_why = "patternProperties"
        elif node.get("additionalProperties", False) is not False:
            open_why = "additionalProperties"
        elif "properties" not in node and "additionalProperties" not in node and path != self.base:
            open_why = "no properties (a free-form object)"
        if open_why:
            self.fail(
                "TX311",
                f"an open object ({open_why}) cannot be made strict without "
                "changing what it accepts",
                path,
                hint="declare its properties, or model the map as an array of "
                "{key, value} objects, or set strict: false",
            )
            return
        node.setdefault("type", "object")
        node["additionalProperties"] = False
        props: dict[str, Any] = dict(node.get("properties", {}))  # may still be the input's
        node["properties"] = props
        required = list(node.get("required", []))
        missing = [r for r in required if r not in props]
        if missing:
            self.fail(
                "TX311",
                f"required {missing} not declared in properties: a closed "
                "object can never satisfy it",
                (*path, "required"),
            )
        if self.p.strict != "openai":
            return
        for name, sub in props.items():
            if name in required or not isinstance(sub, dict):
                continue
            props[name] = make_nullable(sub)
            if _nullable_already(sub):
                self.out.warning(
                    "TX320",
                    f"optional property {name!r} already accepts null: "
                    "strict mode makes it required, so 'absent' and 'null' become "
                    "the same",
                    (*path, "properties", name),
                )
            else:
                self.out.info(
                    "TX320",
                    f"optional property {name!r} made nullable and required (null means absent)",
                    (*path, "properties", name),
                )
        node["required"] = list(props)


def _definitions_to_defs(schema: Any) -> Any:
    """Draft-07 ``definitions`` moved into ``$defs`` (refs rewritten) for targets without it."""
    if not isinstance(schema, dict) or not isinstance(schema.get("definitions"), dict):
        return schema
    text = json.dumps(schema).replace('"#/definitions/', '"#/$defs/')
    moved: dict[str, Any] = json.loads(text)
    moved["$defs"] = {**moved.pop("definitions"), **moved.get("$defs", {})}
    return moved


def convert(schema: Any, profile: Profile, out: Findings, path: JsonPath) -> tuple[Any, bool]:
    """``schema`` rewritten for ``profile``; the flag is False when it was refused.

    ``path`` is where the schema sits in the declaration (``("inputSchema",)``). Copy-on-write:
    the walker copies a node only to change it, and the result shares every other part with
    ``schema`` (treat it as read-only; :func:`~toolctl.export.base.detach` makes it yours).
    """
    if profile.passes_through:
        return schema, True  # nothing to rewrite: the schema itself, uncopied
    if profile.keywords is not None and "definitions" not in profile.keywords:
        schema = _definitions_to_defs(schema)
    walker = _Walker(schema, profile, out, path)
    if not profile.recursion and not profile.inline_refs:
        for at, ref in ref_cycles(schema):
            walker.fail(
                "TX301",
                f"$ref {ref!r} is recursive and this target cannot express recursion",
                (*path, *at, "$ref"),
                hint="make the recursive part a string (e.g. JSON text) or set strict: false",
            )
    result = walker.node(schema, path, ())
    if profile.inline_refs and isinstance(result, dict):
        result = {k: v for k, v in result.items() if k not in ("$defs", "definitions")}
    if profile.strict == "openai" and isinstance(result, dict) and "anyOf" in result:
        walker.fail(
            "TX312",
            "the root schema cannot be an anyOf",
            (*path, "anyOf"),
            hint="make the root one object and move the choice into a property",
        )
    if profile.strict == "openai" and not walker.failed:
        check_openai_limits(result, out, path, walker.fail)
    return result, not walker.failed


def ref_cycles(schema: Any) -> list[tuple[JsonPath, str]]:
    """``$ref`` uses that lead back to a schema being expanded (recursion), each once."""
    found: dict[str, JsonPath] = {}
    done: set[str] = set()

    def walk(node: Any, at: JsonPath, stack: tuple[str, ...]) -> None:
        if isinstance(node, list):
            for i, item in enumerate(node):
                walk(item, (*at, i), stack)
            return
        if not isinstance(node, dict):
            return
        ref = node.get("$ref")
        if isinstance(ref, str) and ref.startswith("#"):
            if ref in stack:
                found.setdefault(ref, at)
            elif ref not in done:
                try:
                    target = resolve_pointer(schema, parse_pointer(ref[1:]))
                except (KeyError, ValueError):
                    target = None
                walk(target, tuple(parse_pointer(ref[1:])), (*stack, ref))
                done.add(ref)
        for key, value in node.items():
            if key not in ("$defs", "definitions", "enum", "const", "default", "examples"):
                walk(value, (*at, key), stack)

    walk(schema, (), ("#",))
    return [(at, ref) for ref, at in found.items()]
