"""Which values two JSON Schemas accept differently: narrowed, widened, or cannot decide.

The approach is json-schema-diff's: a change matters by the values it adds to or removes from the
set a schema accepts. :func:`compare` walks both schemas keyword by keyword and reports, for each
difference, whether the new schema may refuse a value the old one accepted (``NARROWS``), may
accept a value the old one refused (``WIDENS``), or both. Every rule is sound in both directions:
when no change says ``NARROWS`` (or ``UNKNOWN``), every value the old schema accepts, the new one
accepts too, and likewise for ``WIDENS``. What cannot be decided without solving the schemas
(two different patterns or formats, ``oneOf`` or ``if`` edits, ``unevaluated*``) is ``UNKNOWN``,
never a guess.

One deliberate exception, ``UNDECLARED``: declaring a new property on an object that accepts
undeclared properties narrows only the values of a key no caller was told about. It is reported,
but callers built from the declared schema (models are) cannot have sent it.

The caller maps effects to classes: on the input side narrowing breaks callers; on the output
side widening does.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass
from fractions import Fraction
from typing import Any

from toolctl.diagnostics import json_pointer
from toolctl.refs import iter_refs
from toolctl.yamlsrc import JsonPath


class Effect(str, enum.Enum):
    """What a schema change does to the set of accepted values."""

    NARROWS = "narrows"
    WIDENS = "widens"
    UNDECLARED = "undeclared"
    UNKNOWN = "unknown"
    TEXT = "text"


@dataclass(frozen=True)
class SchemaChange:
    """One difference at ``path`` (inside the schema) and its effect."""

    path: JsonPath
    effect: Effect
    detail: str
    place: str = ""  # the property or item it concerns (``city``, ``tags[]``); "" at the root
    old: Any = None
    new: Any = None

    @property
    def message(self) -> str:
        return f"{self.place}: {self.detail}" if self.place else self.detail


TEXT_KEYWORDS = frozenset({"title", "description", "examples", "default", "deprecated"})
_ANNOTATIONS = TEXT_KEYWORDS | {
    "$comment",
    "readOnly",
    "writeOnly",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$vocabulary",
    "$defs",
    "definitions",
}
# Assertions of older drafts or shapes this comparison does not model: equal or UNKNOWN.
_OPAQUE = frozenset(
    {
        "dependencies",
        "additionalItems",
        "unevaluatedProperties",
        "unevaluatedItems",
        "$dynamicRef",
        "$recursiveRef",
        "oneOf",
        "if",
        "then",
        "else",
        "format",
        "pattern",
    }
)
_GROUPED = frozenset(
    {
        "type",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "multipleOf",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "uniqueItems",
        "required",
        "dependentRequired",
        "dependentSchemas",
        "properties",
        "patternProperties",
        "additionalProperties",
        "propertyNames",
        "items",
        "prefixItems",
        "contains",
        "minContains",
        "maxContains",
        "allOf",
        "anyOf",
        "not",
        "$ref",
        "$schema",
    }
)
_ALL_TYPES = ("null", "boolean", "integer", "number", "string", "array", "object")
_FLIP = {Effect.NARROWS: Effect.WIDENS, Effect.WIDENS: Effect.NARROWS}


def same(a: Any, b: Any) -> bool:
    """JSON equality: ``1 == 1.0`` but ``True != 1`` and ``[1] != (1,)`` is irrelevant."""
    if isinstance(a, bool) or isinstance(b, bool):
        return a is b
    if isinstance(a, dict):
        return (
            isinstance(b, dict)
            and a.keys() == b.keys()
            and all(same(v, b[k]) for k, v in a.items())
        )
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    return type(a) is type(b) and bool(a == b)


def trivial(schema: Any) -> bool:
    """True when ``schema`` accepts every value (``true``, absent, or annotations only)."""
    if schema is None or schema is True:
        return True
    return isinstance(schema, dict) and all(k in _ANNOTATIONS or k.startswith("x-") for k in schema)


def where(path: JsonPath) -> str:
    """A short, readable name for a place in a schema: ``city``, ``tags[]``, ``""`` (root)."""
    out: list[str] = []
    parts = list(path)
    i = 0
    while i < len(parts):
        part = parts[i]
        nxt = parts[i + 1] if i + 1 < len(parts) else None
        if part in ("properties", "patternProperties") and nxt is not None:
            out.append(f".{nxt}" if part == "properties" else f"./{nxt}/")
            i += 2
            continue
        if part == "prefixItems" and nxt is not None:
            out.append(f"[{nxt}]")
            i += 2
            continue
        out.append({"items": "[]", "additionalProperties": ".*"}.get(str(part), f" {part}"))
        i += 1
    return "".join(out).strip().lstrip(".")


_CONTAINERS = frozenset(
    {
        "properties",
        "patternProperties",
        "dependentSchemas",
        "dependentRequired",
        "$defs",
        "prefixItems",
    }
)


def _node(path: JsonPath) -> JsonPath:
    """``path`` without its last keyword (the node a keyword change belongs to)."""
    last_is_keyword = (
        bool(path)
        and isinstance(path[-1], str)
        and (len(path) == 1 or path[-2] not in _CONTAINERS)
        and path[-1] not in ("items", "additionalProperties", "contains", "not", "propertyNames")
    )
    return path[:-1] if last_is_keyword else path


def _as_text(value: Any) -> str | None:
    if value is None or isinstance(value, str):
        return value
    import json

    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def _short(value: Any) -> str:
    import json

    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= 60 else text[:57] + "..."


class _Walk:
    """One comparison: the two roots (for local ``$ref``) and the changes found."""

    def __init__(self, old_root: Any, new_root: Any) -> None:
        self.roots = (old_root, new_root)
        self.changes: list[SchemaChange] = []
        self.seen: set[tuple[str, str]] = set()
        self.ref_same: dict[str, bool] = {}
        self.ref_targets: dict[str, list[str]] = {}

    def add(
        self,
        path: JsonPath,
        effect: Effect,
        message: str,
        flip: bool,
        old: Any = None,
        new: Any = None,
    ) -> None:
        if flip:
            effect = _FLIP.get(effect, effect)
        self.changes.append(SchemaChange(path, effect, message, where(_node(path)), old, new))

    # -- entry --------------------------------------------------------------------------

    def schema(self, old: Any, new: Any, path: JsonPath, flip: bool = False) -> None:
        if same(old, new) and self._refs_unchanged(old):
            return
        old = True if old is None else old
        new = True if new is None else new
        both_refs = all(isinstance(s, dict) and "$ref" in s for s in (old, new))
        if not both_refs:  # two references are compared by target, with a recursion guard
            old, new = self._deref(old, 0), self._deref(new, 1)
        if old is False or new is False:
            if old is False and new is not False and not _never(new):
                self.add(path, Effect.WIDENS, "accepted nothing before, now accepts values", flip)
            elif new is False and not _never(old):
                self.add(path, Effect.NARROWS, "now accepts nothing (schema false)", flip)
            return
        self.keywords(
            old if isinstance(old, dict) else {}, new if isinstance(new, dict) else {}, path, flip
        )

    def _refs_unchanged(self, node: Any) -> bool:
        """True when every ``$ref`` reachable from ``node`` has the same target on both sides
        (then equal nodes accept the same values)."""
        pending = _refs_in(node)
        seen: set[str] = set()
        while pending:
            ref = pending.pop()
            if ref in seen:
                continue
            seen.add(ref)
            known = self.ref_same.get(ref)
            if known is None:
                t_o, t_n = _resolve(self.roots[0], ref), _resolve(self.roots[1], ref)
                known = t_o is not None and same(t_o, t_n)
                self.ref_same[ref] = known
                self.ref_targets[ref] = _refs_in(t_o)
            if not known:
                return False
            pending.extend(self.ref_targets[ref])
        return True

    def _deref(self, schema: Any, side: int) -> Any:
        """Follow a ``$ref`` that has nothing but annotations beside it (bounded)."""
        for _ in range(32):
            if not (isinstance(schema, dict) and isinstance(schema.get("$ref"), str)):
                return schema
            if any(k != "$ref" and k not in _ANNOTATIONS for k in schema):
                return schema
            target = _resolve(self.roots[side], schema["$ref"])
            if target is None:
                return schema
            schema = target
        return schema

    def keywords(
        self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool
    ) -> None:
        if ("$ref" in old or "$ref" in new) and not self._refs(old, new, path, flip):
            return
        if not same(old.get("$schema"), new.get("$schema")):
            self.add(path, Effect.UNKNOWN, "cannot decide: the schema dialect changed", flip)
            return
        if (
            "unevaluatedProperties" in old
            or "unevaluatedProperties" in new
            or "unevaluatedItems" in old
            or "unevaluatedItems" in new
        ):
            self.add(path, Effect.UNKNOWN, "cannot decide: unevaluated* with other changes", flip)
            return
        self._types(old, new, path, flip)
        self._values(old, new, path, flip)
        self._bounds(old, new, path, flip)
        self._sizes(old, new, path, flip)
        self._multiple(old, new, path, flip)
        self._unique(old, new, path, flip)
        self._required(old, new, path, flip)
        self._dependent(old, new, path, flip)
        self._objects(old, new, path, flip)
        self._arrays(old, new, path, flip)
        self._contains(old, new, path, flip)
        self._logic(old, new, path, flip)
        self._rest(old, new, path, flip)

    def _refs(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool) -> bool:
        """Compare two ``$ref`` targets; False when nothing more can be said at this node."""
        ref_o, ref_n = old.get("$ref"), new.get("$ref")
        if not (isinstance(ref_o, str) and isinstance(ref_n, str)):
            self.add(path, Effect.UNKNOWN, "cannot decide: a $ref beside other keywords", flip)
            return False
        key = (f"{flip}{ref_o}", ref_n)
        if key not in self.seen:  # recursion: assume equal on the way back (finite values)
            self.seen.add(key)
            target_o = _resolve(self.roots[0], ref_o)
            target_n = _resolve(self.roots[1], ref_n)
            if target_o is None or target_n is None:
                self.add(path, Effect.UNKNOWN, "cannot decide: a $ref points nowhere", flip)
                return False
            self.schema(target_o, target_n, path, flip)
        return True

    # -- keyword families ---------------------------------------------------------------

    def _types(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool) -> None:
        t_o, t_n = _type_set(old.get("type")), _type_set(new.get("type"))
        lost = sorted(t for t in t_o if not _covers(t_n, t))
        gained = sorted(t for t in t_n if not _covers(t_o, t))
        at = (*path, "type")
        if lost:
            self.add(at, Effect.NARROWS, f"type {'/'.join(lost)} no longer accepted", flip)
        if gained:
            self.add(at, Effect.WIDENS, f"type {'/'.join(gained)} now accepted", flip)

    def _values(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool) -> None:
        v_o, v_n = _value_set(old), _value_set(new)
        if v_o is None and v_n is None:
            return
        at = (*path, "enum" if "enum" in new or "enum" in old else "const")
        if v_o is None:
            shown = _short(list((v_n or {}).values()))
            self.add(at, Effect.NARROWS, f"now limited to {shown}", flip)
            return
        if v_n is None:
            self.add(at, Effect.WIDENS, "no longer limited to a list of values", flip)
            return
        removed = [v for k, v in v_o.items() if k not in v_n]
        added = [v for k, v in v_n.items() if k not in v_o]
        if removed:
            self.add(at, Effect.NARROWS, f"value(s) {_short(removed)} removed", flip)
        if added:
            self.add(at, Effect.WIDENS, f"value(s) {_short(added)} added", flip)

    def _bounds(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool) -> None:
        for low in (True, False):
            keys = ("minimum", "exclusiveMinimum") if low else ("maximum", "exclusiveMaximum")
            if all(same(old.get(k), new.get(k)) for k in keys):
                continue
            b_o, b_n = _bound(old, low), _bound(new, low)
            key = keys[0] if keys[0] in new or keys[0] in old else keys[1]
            if b_o is _UNDECIDABLE or b_n is _UNDECIDABLE:
                self.add((*path, key), Effect.UNKNOWN, f"cannot decide: {key} changed", flip)
                continue
            if b_o == b_n:  # the same bound written another way
                continue
            tighter = _tighter(b_n, b_o, low)
            text = (
                f"{'lower' if low else 'upper'} bound {_show_bound(b_o, low)} → "
                f"{_show_bound(b_n, low)}"
            )
            self.add((*path, key), Effect.NARROWS if tighter else Effect.WIDENS, text, flip)

    def _sizes(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool) -> None:
        for key in (
            "minLength",
            "minItems",
            "minProperties",
            "maxLength",
            "maxItems",
            "maxProperties",
        ):
            lo = key.startswith("min")
            default = 0 if lo else float("inf")
            v_o, v_n = old.get(key, default), new.get(key, default)
            if not (isinstance(v_o, (int, float)) and isinstance(v_n, (int, float))):
                if not same(v_o, v_n):
                    self.add((*path, key), Effect.UNKNOWN, f"cannot decide: {key}", flip)
                continue
            if v_o == v_n:
                continue
            narrower = v_n > v_o if lo else v_n < v_o
            shown = [("none" if v == default else _short(v)) for v in (v_o, v_n)]
            self.add(
                (*path, key),
                Effect.NARROWS if narrower else Effect.WIDENS,
                f"{key} {shown[0]} → {shown[1]}",
                flip,
            )

    def _multiple(
        self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool
    ) -> None:
        m_o, m_n = old.get("multipleOf"), new.get("multipleOf")
        if same(m_o, m_n):
            return
        at = (*path, "multipleOf")
        f_o, f_n = _fraction(m_o), _fraction(m_n)
        if (m_o is not None and f_o is None) or (m_n is not None and f_n is None):
            self.add(at, Effect.UNKNOWN, "cannot decide: multipleOf", flip)
            return
        text = f"multipleOf {_short(m_o) if m_o is not None else 'none'} → " + (
            _short(m_n) if m_n is not None else "none"
        )
        if f_n is not None and (f_o is None or (f_o / f_n).denominator != 1):
            self.add(at, Effect.NARROWS, text, flip)
        if f_o is not None and (f_n is None or (f_n / f_o).denominator != 1):
            self.add(at, Effect.WIDENS, text, flip)

    def _unique(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool) -> None:
        u_o, u_n = old.get("uniqueItems") is True, new.get("uniqueItems") is True
        if u_o != u_n:
            effect = Effect.NARROWS if u_n else Effect.WIDENS
            text = "items must now be unique" if u_n else "items no longer need to be unique"
            self.add((*path, "uniqueItems"), effect, text, flip)

    def _required(
        self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool
    ) -> None:
        r_o, r_n = set(old.get("required") or ()), set(new.get("required") or ())
        at = (*path, "required")
        if r_n - r_o:
            self.add(at, Effect.NARROWS, f"now required: {', '.join(sorted(r_n - r_o))}", flip)
        if r_o - r_n:
            self.add(at, Effect.WIDENS, f"no longer required: {', '.join(sorted(r_o - r_n))}", flip)

    def _dependent(
        self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool
    ) -> None:
        d_o, d_n = old.get("dependentRequired") or {}, new.get("dependentRequired") or {}
        for key in sorted(set(d_o) | set(d_n)):
            r_o, r_n = set(d_o.get(key, ())), set(d_n.get(key, ()))
            at = (*path, "dependentRequired", key)
            if r_n - r_o:
                self.add(
                    at,
                    Effect.NARROWS,
                    f"with {key}, now required: {', '.join(sorted(r_n - r_o))}",
                    flip,
                )
            if r_o - r_n:
                self.add(
                    at,
                    Effect.WIDENS,
                    f"with {key}, no longer required: {', '.join(sorted(r_o - r_n))}",
                    flip,
                )
        ds_o, ds_n = old.get("dependentSchemas") or {}, new.get("dependentSchemas") or {}
        for key in sorted(set(ds_o) | set(ds_n)):
            self.schema(ds_o.get(key), ds_n.get(key), (*path, "dependentSchemas", key), flip)

    def _objects(
        self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool
    ) -> None:
        pp_o, pp_n = old.get("patternProperties") or {}, new.get("patternProperties") or {}
        if set(pp_o) != set(pp_n):
            self.add(
                (*path, "patternProperties"),
                Effect.UNKNOWN,
                "cannot decide: patternProperties patterns changed",
                flip,
            )
            return
        for pattern in sorted(pp_o):
            self.schema(pp_o[pattern], pp_n[pattern], (*path, "patternProperties", pattern), flip)
        p_o, p_n = old.get("properties") or {}, new.get("properties") or {}
        a_o, a_n = old.get("additionalProperties", True), new.get("additionalProperties", True)
        for name in sorted(set(p_o) | set(p_n)):
            at = (*path, "properties", name)
            if name in p_o and name in p_n:
                self.schema(p_o[name], p_n[name], at, flip)
            elif _matches_any(name, pp_o):
                self.schema(p_o.get(name, True), p_n.get(name, True), at, flip)
            elif name in p_n:
                self._added_property(name, a_o, p_n[name], at, flip)
            else:
                self._removed_property(name, p_o[name], a_n, at, flip)
        if (a_o is False) != (a_n is False):
            closed = a_n is False
            text = "undeclared properties are " + ("now refused" if closed else "now accepted")
            if not _never(a_o if closed else a_n):
                effect = Effect.NARROWS if closed else Effect.WIDENS
                self.add((*path, "additionalProperties"), effect, text, flip)
        else:
            self.schema(a_o, a_n, (*path, "additionalProperties"), flip)
        self.schema(
            old.get("propertyNames"), new.get("propertyNames"), (*path, "propertyNames"), flip
        )

    def _added_property(
        self, name: str, extra_old: Any, schema: Any, at: JsonPath, flip: bool
    ) -> None:
        if extra_old is False:
            if not _never(schema):
                self.add(at, Effect.WIDENS, f"new property {name!r}", flip)
        elif trivial(extra_old) and not trivial(schema):
            self.add(at, Effect.UNDECLARED, f"new property {name!r} (was undeclared)", flip)
        else:
            self.schema(extra_old, schema, at, flip)

    def _removed_property(
        self, name: str, schema: Any, extra_new: Any, at: JsonPath, flip: bool
    ) -> None:
        if extra_new is False:
            if not _never(schema):
                self.add(
                    at,
                    Effect.NARROWS,
                    f"property {name!r} removed (extra properties are refused)",
                    flip,
                )
        elif trivial(extra_new):
            if not trivial(schema):
                self.add(
                    at,
                    Effect.WIDENS,
                    f"property {name!r} removed (its value is no longer checked)",
                    flip,
                )
        else:
            self.schema(schema, extra_new, at, flip)

    def _arrays(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool) -> None:
        i_o, i_n = old.get("items"), new.get("items")
        if isinstance(i_o, list) or isinstance(i_n, list):  # draft 2019 and older tuples
            if not same(i_o, i_n):
                self.add((*path, "items"), Effect.UNKNOWN, "cannot decide: tuple items", flip)
            return
        pre_o, pre_n = old.get("prefixItems") or [], new.get("prefixItems") or []
        for i in range(max(len(pre_o), len(pre_n))):
            sub_o = pre_o[i] if i < len(pre_o) else i_o
            sub_n = pre_n[i] if i < len(pre_n) else i_n
            self.schema(sub_o, sub_n, (*path, "prefixItems", i), flip)
        self.schema(i_o, i_n, (*path, "items"), flip)

    def _contains(
        self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool
    ) -> None:
        keys = ("contains", "minContains", "maxContains")
        if all(same(old.get(k), new.get(k)) for k in keys):
            return
        at = (*path, "contains")
        c_o, c_n = old.get("contains"), new.get("contains")
        if c_o is None or c_n is None:
            if c_n is not None and not trivial(c_n):
                self.add(at, Effect.NARROWS, "must now contain a matching item", flip)
            elif c_o is not None and not trivial(c_o):
                self.add(at, Effect.WIDENS, "no longer needs a matching item", flip)
            else:
                self.add(at, Effect.UNKNOWN, "cannot decide: contains", flip)
            return
        if "maxContains" in old or "maxContains" in new:  # more matches could exceed it
            self.add(at, Effect.UNKNOWN, "cannot decide: contains with maxContains", flip)
            return
        self.schema(c_o, c_n, at, flip)
        lo_o, lo_n = old.get("minContains", 1), new.get("minContains", 1)
        if lo_o != lo_n:
            effect = Effect.NARROWS if lo_n > lo_o else Effect.WIDENS
            self.add((*path, "minContains"), effect, f"minContains {lo_o} → {lo_n}", flip)

    def _logic(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool) -> None:
        for key, join in (("allOf", Effect.NARROWS), ("anyOf", Effect.WIDENS)):
            l_o, l_n = old.get(key), new.get(key)
            if same(l_o, l_n):
                continue
            if l_o is None or l_n is None:
                # anyOf added limits values to its branches; allOf added adds conjuncts.
                effect = Effect.NARROWS if l_o is None else Effect.WIDENS
                present: list[Any] = (l_n if l_o is None else l_o) or []
                limits = (
                    all(not trivial(b) for b in present)
                    if key == "anyOf"
                    else not all(trivial(b) for b in present)
                )
                if limits:
                    verb = "added" if l_o is None else "removed"
                    self.add((*path, key), effect, f"{key} {verb}", flip)
                continue
            self._branches(key, l_o, l_n, join, path, flip)
        n_o, n_n = old.get("not"), new.get("not")
        if same(n_o, n_n):
            return
        if n_o is None or n_n is None:
            effect = Effect.NARROWS if n_o is None else Effect.WIDENS
            if not _never(n_n if n_o is None else n_o):
                self.add(
                    (*path, "not"), effect, f"not {'added' if n_o is None else 'removed'}", flip
                )
            return
        self.schema(n_o, n_n, (*path, "not"), not flip)

    def _branches(
        self, key: str, l_o: list[Any], l_n: list[Any], added: Effect, path: JsonPath, flip: bool
    ) -> None:
        if len(l_o) == len(l_n):
            for i, (b_o, b_n) in enumerate(zip(l_o, l_n, strict=True)):
                self.schema(b_o, b_n, (*path, key, i), flip)
            return
        rest_n = list(l_n)
        for branch in l_o:
            match = next((i for i, b in enumerate(rest_n) if same(b, branch)), None)
            if match is None:
                removed = Effect.WIDENS if added is Effect.NARROWS else Effect.NARROWS
                self.add((*path, key), removed, f"{key} branch removed: {_short(branch)}", flip)
            else:
                rest_n.pop(match)
        for branch in rest_n:
            self.add((*path, key), added, f"{key} branch added: {_short(branch)}", flip)

    def _rest(self, old: dict[str, Any], new: dict[str, Any], path: JsonPath, flip: bool) -> None:
        for key in sorted(set(old) | set(new)):
            if key in _GROUPED or key in ("$defs", "definitions"):
                continue
            v_o, v_n = old.get(key), new.get(key)
            if same(v_o, v_n):
                continue
            at = (*path, key)
            if key in _OPAQUE:
                self._opaque(key, v_o, v_n, at, flip)
            else:
                shown = "removed" if v_n is None else ("added" if v_o is None else "changed")
                self.add(at, Effect.TEXT, f"{key} {shown}", flip, _as_text(v_o), _as_text(v_n))

    def _opaque(self, key: str, v_o: Any, v_n: Any, at: JsonPath, flip: bool) -> None:
        if key in ("pattern", "format") and (v_o is None or v_n is None):
            effect = Effect.NARROWS if v_o is None else Effect.WIDENS
            shown = _short(v_n if v_o is None else v_o)
            self.add(at, effect, f"{key} {shown} {'added' if v_o is None else 'removed'}", flip)
            return
        if key in ("pattern", "format"):
            text = f"cannot decide: {key} {_short(v_o)} → {_short(v_n)}"
        else:
            text = f"cannot decide: {key} changed"
        self.add(at, Effect.UNKNOWN, text, flip)


# -- helpers -------------------------------------------------------------------------------

_UNDECIDABLE = object()


def _resolve(root: Any, ref: str) -> Any:
    from toolctl.refs import parse_pointer, resolve_pointer

    if not ref.startswith("#"):
        return None
    try:
        return resolve_pointer(root, parse_pointer(ref[1:]))
    except (KeyError, ValueError, IndexError, TypeError):
        return None


def _refs_in(node: Any) -> list[str]:
    """Every ``$ref`` string inside ``node`` (the registry's one schema scan; not in data)."""
    return [ref for _, ref in iter_refs(node)] if isinstance(node, (dict, list)) else []


def _never(schema: Any) -> bool:
    return schema is False or (isinstance(schema, dict) and schema.get("not") in ({}, True))


def _type_set(value: Any) -> set[str]:
    if value is None:
        return set(_ALL_TYPES)
    return {value} if isinstance(value, str) else {str(v) for v in value}


def _covers(types: set[str], t: str) -> bool:
    return t in types or (t == "integer" and "number" in types)


def _value_set(schema: dict[str, Any]) -> dict[str, Any] | None:
    from toolctl.contract.canonical import canonical_json

    values: dict[str, Any] | None = None
    if "enum" in schema and isinstance(schema["enum"], list):
        values = {canonical_json(v): v for v in schema["enum"]}
    if "const" in schema:
        key = canonical_json(schema["const"])
        const = {key: schema["const"]}
        values = const if values is None else {k: v for k, v in values.items() if k in const}
    return values


def _bound(schema: dict[str, Any], low: bool) -> Any:
    """The effective bound as ``(value, exclusive)``; None when absent."""
    inclusive = schema.get("minimum" if low else "maximum")
    exclusive = schema.get("exclusiveMinimum" if low else "exclusiveMaximum")
    if isinstance(exclusive, bool) or (
        inclusive is not None and not isinstance(inclusive, (int, float))
    ):
        return _UNDECIDABLE  # draft-04 boolean exclusive bounds: read with the other keyword
    if exclusive is not None and not isinstance(exclusive, (int, float)):
        return _UNDECIDABLE
    candidates = []
    if inclusive is not None:
        candidates.append((inclusive, False))
    if exclusive is not None:
        candidates.append((exclusive, True))
    if not candidates:
        return None
    if low:  # the higher lower bound wins; exclusive is tighter at the same value
        return max(candidates, key=lambda c: (c[0], c[1]))
    return min(candidates, key=lambda c: (c[0], not c[1]))


def _tighter(new: Any, old: Any, low: bool) -> bool:
    if old is None:
        return True
    if new is None:
        return False
    if low:
        return bool((new[0], new[1]) > (old[0], old[1]))
    return bool((new[0], not new[1]) < (old[0], not old[1]))


def _show_bound(bound: Any, low: bool) -> str:
    """``≥1``/``>1`` for a lower bound, ``≤100``/``<100`` for an upper one."""
    if bound is None:
        return "none"
    if low:
        return f"{'>' if bound[1] else '≥'}{bound[0]}"
    return f"{'<' if bound[1] else '≤'}{bound[0]}"


def _fraction(value: Any) -> Fraction | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0:
        return None
    try:
        return Fraction(repr(value)) if isinstance(value, float) else Fraction(value)
    except (ValueError, OverflowError):
        return None


def _matches_any(name: str, patterns: dict[str, Any]) -> bool:
    from toolctl.schema import pattern_search

    for pattern in patterns:
        try:
            if pattern_search(pattern, name):
                return True
        except Exception:  # an unsupported pattern: assume it may match
            return True
    return False


def compare(old: Any, new: Any) -> list[SchemaChange]:
    """Every difference between schema ``old`` and ``new`` with its effect on accepted values.

    ``None`` (no schema) accepts everything. Local ``$ref`` are followed inside each root.
    """
    walk = _Walk(old, new)
    walk.schema(old, new, ())
    return walk.changes


def pointer(base: JsonPath, change: SchemaChange) -> str:
    """The RFC 6901 pointer of ``change`` inside the declaration key ``base``."""
    return json_pointer((*base, *change.path))
