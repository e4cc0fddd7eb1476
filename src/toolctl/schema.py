"""The one JSON Schema validator factory, and meta-validation of user schemas.

Every path that validates data against a user schema (validate, lint, test, run, serve) builds its
validator here, so the safety rules hold everywhere:

* no ``$ref`` is ever retrieved: the registry refuses every URI (external files are bundled into the
  schema by :mod:`toolctl.refs` before it gets here);
* ``pattern`` and ``patternProperties`` use ECMA-262-like semantics (``$`` only at the very end,
  ``\\d``/``\\w`` ASCII) on RE2, linear in the text, with a bounded fallback
  (:mod:`toolctl.patterns`), so a hostile pattern or value cannot hang or exhaust memory;
* every validation has a CPU budget (:mod:`toolctl.budget`): past it, or when a pattern cannot
  be evaluated, the value is refused (:class:`~toolctl.budget.ValidationRefused`), never accepted;
* ``format`` is an assertion: ``date-time``, ``uri``, ``hostname``, ``email`` ... reject bad
  values, with the checker packages imported only when a value of that format is checked
  (:mod:`toolctl.schemaformats`);
* error lists are capped, and runaway recursion becomes an error instead of a crash.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from toolctl.budget import ValidationBudget, ValidationRefused, tick
from toolctl.diagnostics import json_pointer
from toolctl.patterns import (
    MAX_PATTERN_DEPTH,
    check_pattern_depth,
    compile_pattern,
    group_depth,
    pattern_search,
)

JsonPath = tuple[str | int, ...]

DEFAULT_DIALECT = "https://json-schema.org/draft/2020-12/schema"
MAX_ERRORS = 20
NOT_SCHEMAS = frozenset({"const", "enum", "default", "examples"})
"""Keywords whose values are JSON data, not subschemas: walks over a schema skip them."""


@dataclass(frozen=True)
class SchemaProblem:
    """A problem with a value or schema: where (a JSON path into it) and what."""

    path: JsonPath
    message: str
    keyword: str = ""

    @property
    def pointer(self) -> str:
        return json_pointer(self.path)

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.pointer or "/", "message": self.message, "keyword": self.keyword}


def _refuse(uri: str) -> Any:
    from referencing.exceptions import NoSuchResource

    raise NoSuchResource(ref=uri)  # type: ignore[call-arg]


@functools.cache
def _registry() -> Any:
    from referencing import Registry

    return Registry(retrieve=_refuse)  # type: ignore[call-arg]


# ---------------------------------------------------------------- ECMA-like patterns


def _kw_pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "string"):
        return
    # A pattern that cannot be compiled or evaluated refuses the value (ValidationRefused
    # leaves every enclosing `not`/`anyOf`): as an ordinary error, `not` would accept it.
    if not _search(patrn, instance):
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _search(patrn: str, text: str) -> bool:
    try:
        return pattern_search(patrn, text)
    except ValueError as exc:
        raise ValidationRefused(str(exc)) from None


def _kw_pattern_properties(
    validator: Any, pattern_props: dict[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in pattern_props.items():
        for key, value in instance.items():
            if _search(patrn, key):
                yield from validator.descend(value, subschema, path=key, schema_path=patrn)


def _kw_unique_items(validator: Any, unique: Any, instance: Any, schema: Any) -> Iterator[Any]:
    """``uniqueItems`` in linear time (jsonschema compares unhashable items pairwise)."""
    from jsonschema.exceptions import ValidationError

    if not unique or not validator.is_type(instance, "array"):
        return
    seen: set[Any] = set()
    for item in instance:
        key = _json_key(item)
        if key in seen:
            yield ValidationError(f"{instance!r} has non-unique elements")
            return
        seen.add(key)


def _json_key(value: Any) -> Any:
    """A hashable key equal for equal JSON values (``1 == 1.0``; ``true`` is not ``1``)."""
    if isinstance(value, bool) or value is None:
        return ("b", value)
    if isinstance(value, (int, float)):
        return ("n", value)
    if isinstance(value, str):
        return ("s", value)
    if isinstance(value, dict):
        return ("o", frozenset((k, _json_key(v)) for k, v in value.items()))
    if isinstance(value, (list, tuple)):
        return ("a", tuple(_json_key(v) for v in value))
    return ("?", id(value))


def _charged(keyword: Callable[..., Any]) -> Callable[..., Any]:
    """``keyword`` charging the active validation budget each time it is evaluated."""

    def run(validator: Any, value: Any, instance: Any, schema: Any) -> Any:
        tick()
        return keyword(validator, value, instance, schema)

    return run


class _BoundedRe:
    """Stands in for ``re`` inside jsonschema's helper modules, which search instance keys
    with Python's backtracking ``re`` (``additionalProperties`` next to ``patternProperties``,
    ``unevaluatedProperties``): the same linear, budgeted engine as ``pattern``."""

    def __getattr__(self, name: str) -> Any:
        import re

        return getattr(re, name)

    @staticmethod
    def search(pattern: str, string: str, flags: int = 0) -> bool | None:
        tick()
        return True if _search(pattern, string) else None


def _bound_jsonschema_regexes() -> None:
    import jsonschema._keywords
    import jsonschema._legacy_keywords
    import jsonschema._utils

    for module in (jsonschema._keywords, jsonschema._legacy_keywords, jsonschema._utils):
        module.re = _BoundedRe()  # type: ignore[attr-defined]


# ---------------------------------------------------------------- dialects


# ``$schema`` URI (without "#") -> jsonschema class name. Kept as data so that recognising a
# dialect does not import jsonschema (about 50 ms): the clean path of `validate` never needs it.
_DIALECTS = {
    "https://json-schema.org/draft/2020-12/schema": "Draft202012Validator",
    "https://json-schema.org/draft/2019-09/schema": "Draft201909Validator",
    "http://json-schema.org/draft-07/schema": "Draft7Validator",
    "http://json-schema.org/draft-06/schema": "Draft6Validator",
    "http://json-schema.org/draft-04/schema": "Draft4Validator",
}
_DIALECTS.update({uri.replace("https://", "http://"): cls for uri, cls in _DIALECTS.items()})


@functools.cache
def _dialect_classes() -> dict[str, Any]:
    from toolctl.schemaformats import import_jsonschema

    import_jsonschema()  # first: keeps jsonschema from importing every format package
    from jsonschema import validators

    _bound_jsonschema_regexes()

    return {uri: getattr(validators, name) for uri, name in _DIALECTS.items()}


def dialect_of(schema: Any) -> str | None:
    """The normalised ``$schema`` URI of ``schema`` (2020-12 by default); None when unknown."""
    uri = schema.get("$schema", DEFAULT_DIALECT) if isinstance(schema, dict) else DEFAULT_DIALECT
    if not isinstance(uri, str):
        return None
    uri = uri.rstrip("#")
    return uri if uri in _DIALECTS else None


def dialect_class(schema: Any) -> str:
    """The jsonschema class name for ``schema``'s dialect (2020-12 when absent or unknown)."""
    return _DIALECTS[dialect_of(schema) or DEFAULT_DIALECT]


def enforced_formats(schema: Any = None) -> frozenset[str]:
    """The ``format`` values whose bad values the validators for ``schema``'s dialect reject."""
    return _enforced(dialect_class(schema))


@functools.cache
def _enforced(dialect: str) -> frozenset[str]:
    """Remembered by the CLI's cache while ``sys.path`` is unchanged (a checker package
    installed or removed) and toolctl and jsonschema are (the cache's context): finding them
    imports python-jsonschema, ``referencing`` and ``regex``, most of a warm lint otherwise."""
    from toolctl.cache import remembered_scan, text
    from toolctl.schemaformats import enforced_formats as enforced

    return frozenset(
        remembered_scan(f"<formats {dialect}>", lambda: sorted(enforced(dialect)), text)
    )


@functools.cache
def _validator_class(dialect: str) -> Any:
    base = _dialect_classes()[dialect]
    from jsonschema import validators

    own = {
        "pattern": _kw_pattern,
        "patternProperties": _kw_pattern_properties,
        "uniqueItems": _kw_unique_items,
    }
    keywords = {name: _charged(own.get(name, fn)) for name, fn in base.VALIDATORS.items()}
    return validators.extend(base, keywords)  # type: ignore[no-untyped-call]


def _problem(err: Any) -> SchemaProblem:
    from toolctl.schemamessages import message_of  # JSON's words: null, not None

    return SchemaProblem(tuple(err.absolute_path), message_of(err), str(err.validator))


# ---------------------------------------------------------------- the factory


# ---------------------------------------------------------------- the fast accept

# Keywords that only annotate: no validator evaluates them.
_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
    }
)
# Keywords whose meaning jsonschema-rs and python-jsonschema share exactly. A schema made only of
# these (and annotations, x- keys) is first checked by jsonschema-rs, about fifty times faster:
# a valid value is accepted at once, anything else goes to python-jsonschema for the problems.
# Left out: patternProperties (a regular expression applied to keys, which toolctl's pattern
# callback cannot reach), the unevaluated* keywords, and every keyword of other vocabularies.
_FAST_KEYWORDS = _ANNOTATIONS | frozenset(
    {
        "type",
        "properties",
        "required",
        "additionalProperties",
        "items",
        "prefixItems",
        "enum",
        "const",
        "minimum",
        "maximum",
        "exclusiveMinimum",
        "exclusiveMaximum",
        "minLength",
        "maxLength",
        "minItems",
        "maxItems",
        "minProperties",
        "maxProperties",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "dependentRequired",
        "dependentSchemas",
        "propertyNames",
        "contains",
        "minContains",
        "maxContains",
        "if",
        "then",
        "else",
    }
)
# Keywords jsonschema-rs evaluates with toolctl's own code (a custom keyword or format calling
# back into Python), so their meaning is this module's: ECMA-like bounded patterns, formats as
# assertions with toolctl's checkers, uniqueItems with JSON equality, multipleOf with
# python-jsonschema's arithmetic (float quotient, exact fractions past overflow). A local ``$ref``
# to a top-level ``$defs`` entry is resolved alike by both (only when no chain of references
# comes back without moving down the value, and for a recursive schema only on shallow values:
# see FAST_RECURSIVE_DEPTH).
_OWN_KEYWORDS = frozenset({"pattern", "format", "uniqueItems", "multipleOf", "$ref"})
_ONE_SUBSCHEMA = frozenset(
    {"additionalProperties", "items", "not", "propertyNames", "contains", "if", "then", "else"}
)
_SUBSCHEMA_MAPS = frozenset({"properties", "dependentSchemas"})
# Subschemas applied to a part of the value (a property, an item, a key), not to the value
# itself: a chain of references through one of these moves down the value at every turn.
_DESCENDING = frozenset(
    {"properties", "items", "prefixItems", "additionalProperties", "contains", "propertyNames"}
)
# A value checked by a schema whose references loop (through _DESCENDING keywords) is first
# measured: jsonschema-rs recurses on the Rust stack once per level of such a value, and a
# value nested deep enough (tens of thousands of levels) overflows it and ends the process.
# Deeper values go to python-jsonschema, which reports "nested too deeply".
FAST_RECURSIVE_DEPTH = 128
_SUBSCHEMA_LISTS = frozenset({"prefixItems", "anyOf", "oneOf", "allOf"})
_DEF_REF = re.compile(r"#/\$defs/([A-Za-z0-9_.-]+)")


@dataclass
class _Plain:
    """What :func:`_plain` found: the top-level ``$defs`` each ``$ref`` names (``level``: those
    applied to the value itself, not to a part of it), the formats, and whether references
    loop (through a part of the value: :data:`_DESCENDING`)."""

    refs: list[str]
    formats: set[str]
    level: list[str] = field(default_factory=list)
    recursive: bool = False


def _plain(schema: Any, found: _Plain) -> bool:
    """True when ``schema`` uses only :data:`_FAST_KEYWORDS`, :data:`_OWN_KEYWORDS` (``$ref``
    as ``#/$defs/Name`` only) and ``x-`` keys, all the way down. ``found.level`` gets the
    references applied to the value the walk starts at (not to a part of it: :data:`_DESCENDING`).

    Iterative, with one stack for the whole walk: it runs over every tool schema whose
    examples a load checks, and a call (and a generator) per subschema was most of its time.
    The verdict does not depend on the order: each object is judged by its own keys."""
    stack: list[tuple[Any, bool]] = [(schema, True)]  # (a subschema, whether it is "level")
    push, pop = stack.append, stack.pop
    fast, own, one, lists = _FAST_KEYWORDS, _OWN_KEYWORDS, _ONE_SUBSCHEMA, _SUBSCHEMA_LISTS
    maps, down = _SUBSCHEMA_MAPS, _DESCENDING
    while stack:
        node, same = pop()
        if node is True or node is False:
            continue
        if not isinstance(node, dict):
            return False
        for key, value in node.items():
            if key in fast:
                inner = same and key not in down
                if key in maps:
                    if not isinstance(value, dict):
                        return False
                    stack += [(sub, inner) for sub in value.values()]
                elif key in one:
                    push((value, inner))
                elif key in lists:
                    if not isinstance(value, list):
                        return False
                    stack += [(sub, inner) for sub in value]
            elif key in own:
                if not _own_keyword(key, value, found, same):
                    return False
            elif not isinstance(key, str) or not key.startswith("x-"):
                return False
    return True


def _own_keyword(key: str, value: Any, found: _Plain, same: bool) -> bool:
    """Whether the value of one of :data:`_OWN_KEYWORDS` is one the fast path takes."""
    if key == "uniqueItems":
        return isinstance(value, bool)
    if key == "multipleOf":
        return _is_number(value) and value > 0
    if not isinstance(value, str):
        return False
    if key == "$ref":
        match = _DEF_REF.fullmatch(value)
        if match is None:
            return False
        found.refs.append(match.group(1))
        if same:
            found.level.append(match.group(1))
    elif key == "format":
        found.formats.add(value)
    return True


def _plain_defs(body: dict[str, Any], found: _Plain) -> bool:
    """The top-level ``$defs`` of ``body`` are plain, each ``$ref`` names one of them, and no
    chain of references leads back to where it started without moving into a part of the value
    (an endless loop, on which jsonschema-rs would recurse without end). A chain that does move
    down the value (a tree, a nested filter) sets ``found.recursive``."""
    defs = body.get("$defs", {})
    if not isinstance(defs, dict):
        return False
    edges: dict[str, list[str]] = {}
    level: dict[str, list[str]] = {}
    for name, sub in defs.items():
        inner = _Plain([], found.formats)
        if not _plain(sub, inner):
            return False
        edges[name], level[name] = inner.refs, inner.level
    named = [*found.refs, *(ref for refs in edges.values() for ref in refs)]
    if any(name not in defs for name in named) or _loops(level):
        return False
    found.recursive = _loops(edges)
    return True


def _loops(edges: dict[str, list[str]]) -> bool:
    """Whether a chain of ``edges`` (name -> the names it refers to) comes back to a name."""
    done: set[str] = set()
    for start in edges:  # an iterative depth-first search
        if start in done:
            continue
        path, stack = {start}, [(start, iter(edges[start]))]
        while stack:
            step = next(stack[-1][1], None)
            if step is None:
                path.discard(stack.pop()[0])
                continue
            if step in path:
                return True
            if step not in done:
                done.add(step)
                path.add(step)
                stack.append((step, iter(edges[step])))
        done.add(start)
    return False


class _Trouble(threading.local):
    """Set when one of toolctl's keywords could not decide inside jsonschema-rs (a pattern
    refused, the budget spent, a checker failing): jsonschema-rs takes any exception for "not
    valid", which under ``not`` would accept the value, so the fast path then decides nothing."""

    seen = False


_TROUBLE = _Trouble()


def _decided(check: Callable[[], bool]) -> bool:
    """``check()``, charged to the call's budget; any exception is trouble (:class:`_Trouble`)."""
    try:
        tick()
        return check()
    except Exception:
        _TROUBLE.seen = True
        raise


class _RsPattern:
    """``pattern`` for jsonschema-rs: this module's bounded ECMA-like search."""

    def __init__(self, parent: Any, value: str, path: Any) -> None:
        self.pattern = value

    def validate(self, instance: Any) -> None:
        if isinstance(instance, str) and not _decided(lambda: _search(self.pattern, instance)):
            raise ValueError("does not match")


class _RsUnique:
    """``uniqueItems`` for jsonschema-rs: JSON equality (``1 == 1.0``, ``true`` is not ``1``)."""

    def __init__(self, parent: Any, value: bool, path: Any) -> None:
        self.unique = value

    def validate(self, instance: Any) -> None:
        if self.unique and isinstance(instance, list) and not _decided(lambda: _unique(instance)):
            raise ValueError("non-unique elements")


class _RsMultipleOf:
    """``multipleOf`` for jsonschema-rs: python-jsonschema's arithmetic, so both agree on
    every float (``0.3`` is not a multiple of ``0.1`` for either)."""

    def __init__(self, parent: Any, value: int | float, path: Any) -> None:
        self.divisor = value

    def validate(self, instance: Any) -> None:
        if _is_number(instance) and not _decided(lambda: _multiple(instance, self.divisor)):
            raise ValueError("not a multiple")


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _multiple(instance: int | float, divisor: int | float) -> bool:
    """python-jsonschema's ``multipleOf`` (its ``_keywords.multipleOf``), as a verdict."""
    if isinstance(divisor, float):
        quotient = instance / divisor
        try:
            return int(quotient) == quotient
        except OverflowError:  # a huge quotient: exact fractions, as python-jsonschema does
            from fractions import Fraction

            return (Fraction(instance) / Fraction(divisor)).denominator == 1
    return not instance % divisor


def _unique(items: list[Any]) -> bool:
    keys = [_json_key(item) for item in items]
    return len(set(keys)) == len(keys)


def _rs_format(check: Callable[[str], bool] | None) -> Callable[[str], bool]:
    """A format callback for jsonschema-rs: every format the schema names gets one (a format
    toolctl does not enforce accepts anything), so jsonschema-rs's own semantics never apply."""
    if check is None:
        return lambda value: True

    def conforms(value: str) -> bool:
        return _decided(lambda: check(value))

    return conforms


def _fast_accept(schema: Any) -> Callable[[Any], bool] | None:
    """jsonschema-rs's ``is_valid`` for a plain 2020-12 schema; None for any other schema."""
    if dialect_of(schema) != DEFAULT_DIALECT:
        return None
    found = _Plain([], set())
    if isinstance(schema, dict):
        body = {k: v for k, v in schema.items() if k not in ("$schema", "$defs")}
        if not _plain(body, found) or not _plain_defs(schema, found):
            return None
        body = {k: v for k, v in schema.items() if k != "$schema"}
    else:
        body = schema
        if not _plain(body, found):
            return None
    try:
        import jsonschema_rs

        formats = {}
        if found.formats:
            from toolctl.schemaformats import checkers  # not jsonschema: see _rs_format

            enforced = checkers(_DIALECTS[DEFAULT_DIALECT])
            formats = {name: _rs_format(enforced.get(name)) for name in found.formats}
        fn: Callable[[Any], bool] = jsonschema_rs.Draft202012Validator(
            body,
            formats=formats,
            validate_formats=True,
            keywords={
                "pattern": _RsPattern,
                "uniqueItems": _RsUnique,
                "multipleOf": _RsMultipleOf,
            },
            offline=True,  # nothing is ever retrieved (only #/$defs/... get here anyway)
        ).is_valid
    except Exception:  # not installed, or a schema it does not take: python-jsonschema only
        return None
    if found.recursive:
        return _depth_guarded(fn)
    return fn


def _depth_guarded(is_valid: Callable[[Any], bool]) -> Callable[[Any], bool]:
    """``is_valid`` for values nested at most :data:`FAST_RECURSIVE_DEPTH` deep; False (ask
    python-jsonschema) for deeper ones."""

    def accept(instance: Any) -> bool:
        return _shallow(instance, FAST_RECURSIVE_DEPTH) and is_valid(instance)

    return accept


def _shallow(value: Any, limit: int) -> bool:
    """Whether ``value``'s lists and mappings nest at most ``limit`` deep."""
    stack = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            node = list(node.values())
        elif not isinstance(node, (list, tuple)):
            continue
        if depth >= limit:
            return False
        stack.extend((item, depth + 1) for item in node)
    return True


# ---------------------------------------------------------------- the walk of a value

# A tool's input examples are a few small values; its input schema, with the shared definitions
# bundled in, is large. Compiling the schema (jsonschema-rs) costs what the schema holds; walking
# each value along the subschemas that apply to it costs what the value holds. The walk below
# decides only what it decides exactly as python-jsonschema (toolctl's keywords included) does,
# and raises _Undecided for anything else: then the compiled validators decide, as before.


class _Undecided(Exception):
    """The walk met what it does not judge (see :func:`walk_accepts`)."""


WALK_STEPS = 10_000
"""Subschemas the walk visits for one call before it gives up: ``anyOf`` nested along a
recursive reference can cost exponential time (python-jsonschema, under a budget, decides)."""
WALK_DEPTH = 200
"""Subschemas nested in one another the walk follows (each is a Python call or two)."""

# python-jsonschema's keywords for 2020-12 (Draft202012Validator.VALIDATORS, which toolctl's
# validator class extends without adding any: a test holds this to the installed version)
# that the walk does not evaluate: they make a value undecided. Every other key it does not
# know (title, description, nullable, ...) python-jsonschema ignores, and so does the walk.
_WALK_REFUSED = frozenset(
    {"$dynamicRef", "patternProperties", "unevaluatedItems", "unevaluatedProperties"}
)
# Keys every tool has that only annotate, or that their keyword reads ("then" is read by "if"):
# skipped at once. Any other "$"-key ("$id", "$anchor", "$schema" below the top, a nested
# "$defs" ...) may change what a reference means, and makes the value undecided.
_WALK_NOTES = _ANNOTATIONS | {"then", "else", "minContains", "maxContains"}
# The kind of a value, by its exact type: JSON's type names, and 1 and 2 for integers and floats
# (not strings, so that no "type" a schema names, known or not, can equal them).
_Kind = str | int
_INT, _FLOAT = 1, 2
_KIND: dict[type, _Kind] = {
    dict: "object",
    list: "array",
    str: "string",
    bool: "boolean",
    type(None): "null",
    int: _INT,
    float: _FLOAT,
}
_NUMBER = frozenset({_INT, _FLOAT})


def walk_accepts(schema: Any, instances: Iterator[Any] | list[Any]) -> bool:
    """True when every one of ``instances`` is valid against ``schema`` (a 2020-12 schema whose
    references are ``#/$defs/Name``), decided by walking each value; False means "ask a
    validator": a value is invalid, or the walk met what it does not judge (a keyword listed in
    :data:`_WALK_REFUSED`, another reference, a type of value JSON has not, a pattern or format
    check that failed to decide, more than :data:`WALK_STEPS` or :data:`WALK_DEPTH`).

    Every keyword of a subschema it visits is evaluated, also after one failed (python-jsonschema
    evaluates them all, and a pattern it cannot evaluate refuses the value wherever it is)."""
    if type(schema) is not dict or dialect_of(schema) != DEFAULT_DIALECT:
        return False
    defs = schema.get("$defs", {})
    if type(defs) is not dict:
        return False
    walk = _Walk(schema, defs)
    try:
        return all(walk.valid(schema, value, 0) for value in instances)
    except (_Undecided, ValidationRefused, RecursionError):
        return False
    except Exception:  # a checker or an arithmetic that failed: python-jsonschema decides
        return False


class _Walk:
    __slots__ = ("defs", "formats", "root", "steps")

    def __init__(self, root: dict[str, Any], defs: dict[str, Any]) -> None:
        self.root = root
        self.defs = defs
        self.steps = WALK_STEPS
        self.formats: dict[str, Callable[[str], bool]] | None = None  # looked up on first use

    def valid(self, node: Any, value: Any, depth: int) -> bool:
        """Whether ``value`` is valid against the subschema ``node``."""
        if node is True:
            return True
        if node is False:
            return False
        kind = _KIND.get(type(value))
        self.steps -= 1
        if type(node) is not dict or kind is None or self.steps < 0 or depth > WALK_DEPTH:
            raise _Undecided
        ok = True
        depth += 1
        for key, arg in node.items():
            check = _WALK_KEYWORDS.get(key)
            if check is None:
                if key in _WALK_NOTES:
                    continue
                if (
                    type(key) is not str
                    or key in _WALK_REFUSED
                    or (key[:1] == "$" and not self.top(node, key))
                ):
                    raise _Undecided
            elif key == "type":  # nearly every subschema has one: no call for it
                if arg != kind and not _w_type(self, arg, value, kind, node, depth):
                    ok = False
            elif not check(self, arg, value, kind, node, depth):
                ok = False
        return ok

    def top(self, node: dict[str, Any], key: str) -> bool:
        """Whether ``key`` is the root's ``$schema`` or ``$defs`` (known and followed)."""
        return node is self.root and (key == "$defs" or key == "$schema")

    def format_check(self, name: str) -> Callable[[str], bool] | None:
        if self.formats is None:
            from toolctl.schemaformats import checkers  # not jsonschema: see _rs_format

            self.formats = checkers(_DIALECTS[DEFAULT_DIALECT])
        return self.formats.get(name)


_Keyword = Callable[[_Walk, Any, Any, _Kind, dict[str, Any], int], bool]


def _equal(one: Any, two: Any) -> bool:
    """python-jsonschema's ``_utils.equal`` (``const``, ``enum``): ``true`` is not ``1``, ``1``
    is ``1.0``, deep in arrays and objects alike."""
    if one is two:
        return True
    if isinstance(one, str) or isinstance(two, str):
        return bool(one == two)
    if isinstance(one, Sequence) and isinstance(two, Sequence):
        return len(one) == len(two) and all(_equal(i, j) for i, j in zip(one, two, strict=True))
    if isinstance(one, Mapping) and isinstance(two, Mapping):
        return len(one) == len(two) and all(
            key in two and _equal(value, two[key]) for key, value in one.items()
        )
    if one is True or one is False or two is True or two is False:
        return False  # (``one is two`` was not): a boolean equals only itself
    return bool(one == two)


def _w_type(walk: _Walk, types: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    for name in (types,) if type(types) is str else types:
        if name not in _TYPE_NAMES:
            raise _Undecided  # python-jsonschema: an unknown type
        if (
            name == kind
            or (name == "number" and kind in _NUMBER)
            or (name == "integer" and (kind == _INT or (kind == _FLOAT and value.is_integer())))
        ):
            return True
    return False


_TYPE_NAMES = frozenset({"object", "array", "string", "boolean", "null", "integer", "number"})


def _w_properties(walk: _Walk, props: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if type(props) is not dict:
        raise _Undecided
    if kind != "object":
        return True
    ok = True
    for name, item in value.items():  # the value's few keys, not the schema's many
        if name in props and not walk.valid(props[name], item, depth):
            ok = False
    return ok


def _w_required(walk: _Walk, names: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if type(names) is not list:
        raise _Undecided
    if kind == "object":
        for name in names:
            if name not in value:
                return False
    return True


def _w_additional(walk: _Walk, extra: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    props = node.get("properties", {})
    if type(props) is not dict or "patternProperties" in node:
        raise _Undecided
    if kind != "object" or extra is True:
        return True
    if extra is False:
        return bool(value.keys() <= props.keys())  # every name of the value is a property
    ok = True
    for name, item in value.items():
        if name not in props and not walk.valid(extra, item, depth):
            ok = False
    return ok


def _w_items(walk: _Walk, items: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    prefix = node.get("prefixItems", [])
    if type(prefix) is not list:
        raise _Undecided
    if kind != "array" or len(value) <= len(prefix):
        return True
    if items is False:
        return False
    return _all_valid(walk, ((items, item) for item in value[len(prefix) :]), depth)


def _w_prefix(walk: _Walk, prefix: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if type(prefix) is not list:
        raise _Undecided
    return kind != "array" or _all_valid(walk, zip(prefix, value, strict=False), depth)


def _all_valid(walk: _Walk, pairs: Any, depth: int) -> bool:
    """Whether every (subschema, value) pair is valid; every pair is walked."""
    ok = True
    for sub, item in pairs:
        if not walk.valid(sub, item, depth):
            ok = False
    return ok


def _w_enum(walk: _Walk, options: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if type(options) is not list:
        raise _Undecided
    if kind == "string":  # list's `in` is `is` or `==`: _equal's verdict for a string
        return value in options
    return any(_equal(option, value) for option in options)


def _w_const(walk: _Walk, const: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return _equal(value, const)


# python-jsonschema's comparisons, as Python's operators make them (a function each: no
# closure or lambda between the walk and the comparison)
def _w_minimum(walk: _Walk, limit: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return kind not in _NUMBER or not value < limit


def _w_maximum(walk: _Walk, limit: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return kind not in _NUMBER or not value > limit


def _w_ex_min(walk: _Walk, limit: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return kind not in _NUMBER or not value <= limit


def _w_ex_max(walk: _Walk, limit: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return kind not in _NUMBER or not value >= limit


def _w_min_length(walk: _Walk, limit: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return kind != "string" or not len(value) < limit


def _w_max_length(walk: _Walk, limit: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return kind != "string" or not len(value) > limit


def _w_min_items(walk: _Walk, limit: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return kind != "array" or not len(value) < limit


def _w_max_items(walk: _Walk, limit: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return kind != "array" or not len(value) > limit


def _w_min_props(walk: _Walk, limit: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return kind != "object" or not len(value) < limit


def _w_max_props(walk: _Walk, limit: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return kind != "object" or not len(value) > limit


def _w_any(walk: _Walk, subs: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if type(subs) is not list:
        raise _Undecided
    # python-jsonschema too stops at the first valid branch (and walks the others whole)
    return any(walk.valid(sub, value, depth) for sub in subs)


def _w_all(walk: _Walk, subs: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if type(subs) is not list:
        raise _Undecided
    return _all_valid(walk, ((sub, value) for sub in subs), depth)


def _w_one(walk: _Walk, subs: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if type(subs) is not list:
        raise _Undecided
    return [walk.valid(sub, value, depth) for sub in subs].count(True) == 1


def _w_not(walk: _Walk, sub: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return not walk.valid(sub, value, depth)


def _w_if(walk: _Walk, sub: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    branch = "then" if walk.valid(sub, value, depth) else "else"
    return branch not in node or walk.valid(node[branch], value, depth)


def _w_dep_required(walk: _Walk, deps: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if type(deps) is not dict:
        raise _Undecided
    if kind != "object":
        return True
    return all(name in value for key, names in deps.items() if key in value for name in names)


def _w_dep_schemas(walk: _Walk, deps: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if type(deps) is not dict:
        raise _Undecided
    if kind != "object":
        return True
    return _all_valid(walk, ((sub, value) for key, sub in deps.items() if key in value), depth)


def _w_names(walk: _Walk, sub: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    return kind != "object" or _all_valid(walk, ((sub, name) for name in value), depth)


def _w_contains(walk: _Walk, sub: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if kind != "array":
        return True
    matches = [walk.valid(sub, item, depth) for item in value].count(True)
    return bool(node.get("minContains", 1) <= matches <= node.get("maxContains", len(value)))


def _w_ref(walk: _Walk, ref: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    match = _DEF_REF.fullmatch(ref) if type(ref) is str else None
    target = walk.defs.get(match.group(1), _Undecided) if match is not None else _Undecided
    if target is _Undecided:
        raise _Undecided  # (python-jsonschema: another document, or nothing there)
    return walk.valid(target, value, depth)


def _w_pattern(walk: _Walk, patrn: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if type(patrn) is not str:
        raise _Undecided
    if kind != "string":
        return True
    tick()
    return bool(_search(patrn, value))


def _w_format(walk: _Walk, name: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    check = walk.format_check(name) if kind == "string" else None
    if check is None:  # a format toolctl does not enforce accepts anything
        return True
    tick()
    return bool(check(value))


def _w_unique(walk: _Walk, unique: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if type(unique) is not bool:
        raise _Undecided
    if not unique or kind != "array":
        return True
    tick()
    return _unique(value)


def _w_multiple(walk: _Walk, divisor: Any, value: Any, kind: _Kind, node: Any, depth: int) -> bool:
    if not _is_number(divisor) or divisor <= 0:
        raise _Undecided
    if kind not in _NUMBER:
        return True
    tick()
    return _multiple(value, divisor)


_WALK_KEYWORDS: dict[str, _Keyword] = {
    "type": _w_type,
    "properties": _w_properties,
    "required": _w_required,
    "additionalProperties": _w_additional,
    "items": _w_items,
    "prefixItems": _w_prefix,
    "enum": _w_enum,
    "const": _w_const,
    "minimum": _w_minimum,
    "maximum": _w_maximum,
    "exclusiveMinimum": _w_ex_min,
    "exclusiveMaximum": _w_ex_max,
    "minLength": _w_min_length,
    "maxLength": _w_max_length,
    "minItems": _w_min_items,
    "maxItems": _w_max_items,
    "minProperties": _w_min_props,
    "maxProperties": _w_max_props,
    "anyOf": _w_any,
    "allOf": _w_all,
    "oneOf": _w_one,
    "not": _w_not,
    "if": _w_if,
    "dependentRequired": _w_dep_required,
    "dependentSchemas": _w_dep_schemas,
    "propertyNames": _w_names,
    "contains": _w_contains,
    "$ref": _w_ref,
    "pattern": _w_pattern,
    "format": _w_format,
    "uniqueItems": _w_unique,
    "multipleOf": _w_multiple,
}


_UNSET: Any = object()
_CALLBACK_KEYWORDS = frozenset({"pattern", "format", "uniqueItems", "multipleOf"})


def _calls_back(schema: Any) -> bool:
    """Whether the fast path of ``schema`` calls back into Python (a pattern, a format,
    multipleOf or uniqueItems anywhere): bounded by the validation budget, but not by
    jsonschema-rs alone."""
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if not _CALLBACK_KEYWORDS.isdisjoint(node):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


class Validator:
    """A compiled validator for one schema. Build it once; call it many times.

    Use :func:`make_validator` (or :func:`cached_validator`) rather than this class directly.
    """

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self._fast: Callable[[Any], bool] | None = _UNSET  # built on first use
        self._inline: bool | None = None  # the fast path calls no Python: see loop_accept
        self._impl_: Any = None  # python-jsonschema: built when a value is not fast-accepted

    @property
    def _impl(self) -> Any:
        if self._impl_ is None:
            from toolctl.schemaformats import format_checker

            dialect = dialect_of(self.schema) or DEFAULT_DIALECT
            cls = _validator_class(dialect)
            # formats are assertions: jsonschema's checkers plus toolctl's lazily loaded ones
            checker = format_checker(_DIALECTS[dialect])
            self._impl_ = cls(self.schema, registry=_registry(), format_checker=checker)
        return self._impl_

    def is_valid(self, instance: Any) -> bool:
        """True when ``instance`` is valid (unresolvable ``$ref`` or runaway recursion: False)."""
        return not self.errors(instance, limit=1)

    def raw_errors(self, instance: Any) -> Iterator[Any]:
        """jsonschema's own error objects (with ``context``, ``schema`` and paths), lazily.

        For callers that explain errors themselves, such as the tool-format check.
        """
        errors: Iterator[Any] = self._impl.iter_errors(instance)
        return errors

    def quick_accept(self, instance: Any) -> bool:
        """True when the fast path alone accepts ``instance`` (a plain schema, checked by
        jsonschema-rs in time linear in the value); False means "ask :meth:`errors`"."""
        if self._fast is _UNSET:
            self._fast = _fast_accept(self.schema)
        if self._fast is None:
            return False
        _TROUBLE.seen = False
        try:
            accepted = self._fast(instance)
        except Exception:  # a value jsonschema-rs cannot take: the full check decides
            return False
        return accepted and not _TROUBLE.seen

    def loop_accept(self, instance: Any) -> bool:
        """:meth:`quick_accept` where a call's event loop may run it: only for a schema whose
        fast path calls no Python (no pattern, format, multipleOf or uniqueItems), so its time
        is linear in the value inside jsonschema-rs. Anything else is "ask :meth:`errors`",
        which the runtime runs on a worker thread under the call's validation budget."""
        if self._inline is None:
            self._inline = not _calls_back(self.schema)
        return self._inline and self.quick_accept(instance)

    def errors(
        self, instance: Any, limit: int = MAX_ERRORS, budget: ValidationBudget | None = None
    ) -> list[SchemaProblem]:
        """At most ``limit`` problems, best first; an empty list when valid.

        The work is charged to ``budget`` (the call's); past it, or when a pattern cannot be
        evaluated, :class:`~toolctl.budget.ValidationRefused` is raised. Without a budget the
        check gets a default one of its own and a refusal is returned as one problem (keyword
        ``refused``): either way the value is never accepted.
        """
        if budget is not None:
            with budget.active():  # toolctl's keywords inside jsonschema-rs charge it too
                accepted = self.quick_accept(instance)
            return [] if accepted else self._full(instance, limit, budget)
        if self.quick_accept(instance):
            return []
        try:
            return self._full(instance, limit, ValidationBudget())
        except ValidationRefused as exc:
            return [SchemaProblem((), str(exc), "refused")]

    def _full(self, instance: Any, limit: int, budget: ValidationBudget) -> list[SchemaProblem]:
        from referencing.exceptions import Unresolvable

        out: list[SchemaProblem] = []
        try:
            with budget.active():
                for err in self._impl.iter_errors(instance):
                    out.append(_problem(err))
                    if len(out) >= limit * 5:
                        break
        except RecursionError:
            return [SchemaProblem((), "value is nested too deeply for this schema", "depth")]
        except OverflowError:  # python-jsonschema's float multipleOf of a number past float range
            message = "a number in the value is too large to check against multipleOf"
            return [SchemaProblem((), message, "multipleOf")]
        except Unresolvable as exc:
            return [SchemaProblem((), f"schema reference cannot be resolved: {exc}", "$ref")]
        return out[:limit]


def make_validator(schema: Any) -> Validator:
    """The validator factory: every validation of user data goes through here."""
    return Validator(schema)


_CACHE: dict[str, Validator] = {}
CACHED_VALIDATORS = 256
"""Validators :func:`cached_validator` keeps, the most recently used: a load checks each tool's
examples once, and keeping every one (its key text and python-jsonschema's compiled form) was a
fifth of a 10,000-tool ``validate``'s memory. Callers that validate one schema again and again
(the runtime's per-tool plans) hold their validator themselves."""


def forget_validators() -> int:
    """Drop every validator :func:`cached_validator` keeps; return how many there were."""
    count = len(_CACHE)
    _CACHE.clear()
    return count


def cached_validator(schema: Any) -> Validator:
    """A validator for ``schema``, built once per distinct schema while it is in use."""
    key = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    found = _CACHE.pop(key, None)
    if found is None:
        found = make_validator(schema)
        if len(_CACHE) >= CACHED_VALIDATORS:
            del _CACHE[next(iter(_CACHE))]  # the least recently used
    _CACHE[key] = found  # (again) the most recent: dicts keep insertion order
    return found


# ---------------------------------------------------------------- meta-validation


@functools.cache  # called for every schema checked: an import statement's lookups add up
def _rs_meta_is_valid() -> Callable[[Any], bool] | None:
    try:
        import jsonschema_rs
    except ImportError:  # pragma: no cover - optional fast path
        return None
    fn: Callable[[Any], bool] = jsonschema_rs.meta.is_valid
    return fn


def _walk_patterns(root: Any) -> Iterator[tuple[JsonPath, str]]:
    """Every ``pattern`` and ``patternProperties`` name in a schema, with its path.

    Iterative, with a node's path kept as a linked ``(parent, key)`` pair and made a tuple only
    for a hit: this runs on every schema of every tool.
    """
    stack: list[tuple[Any, Any]] = [(root, None)]
    push, pop = stack.append, stack.pop
    found: list[tuple[Any, str]] = []
    while stack:
        node, link = pop()
        if type(node) is dict:
            patrn = node.get("pattern")
            if isinstance(patrn, str):
                found.append(((link, "pattern"), patrn))
            named = node.get("patternProperties")
            if isinstance(named, dict):
                found += [(((link, "patternProperties"), name), name) for name in named]
            for key, value in reversed(node.items()):  # reversed: pop in document order
                if (type(value) is dict or type(value) is list) and key not in NOT_SCHEMAS:
                    push((value, (link, key)))
        elif type(node) is list:
            for i in range(len(node) - 1, -1, -1):
                if type(node[i]) is dict or type(node[i]) is list:
                    push((node[i], (link, i)))
    for link, patrn in found:
        parts: list[str | int] = []
        while link is not None:
            link, part = link
            parts.append(part)
        yield tuple(reversed(parts)), patrn


def check_schema(
    schema: Any, *, patterns: bool | list[tuple[JsonPath, str]] = True
) -> list[SchemaProblem]:
    """Problems that make ``schema`` not a valid JSON Schema of its dialect (empty when fine).

    Uses jsonschema-rs for the common valid case (hundreds of times faster) and python jsonschema
    for located messages when something is wrong. ``patterns=False`` when the caller knows the
    schema has no ``pattern`` or ``patternProperties`` key (their regexes are compiled here);
    a list: the (path, pattern) pairs the caller's own walk of it found, so it is not walked
    again.
    """
    if isinstance(schema, bool):
        return []
    if not isinstance(schema, dict):
        return [SchemaProblem((), "a schema must be an object or a boolean", "type")]
    dialect = dialect_of(schema)
    if dialect is None:
        return [
            SchemaProblem(
                ("$schema",),
                f"unknown $schema dialect {schema.get('$schema')!r}; "
                "use https://json-schema.org/draft/2020-12/schema",
                "$schema",
            )
        ]
    problems: list[SchemaProblem] = []
    fast = _rs_meta_is_valid()
    valid = False
    if fast is not None:
        try:
            valid = fast(schema)
        except Exception:  # the fast path is an optimisation only
            valid = False
    if not valid:
        cls = _dialect_classes()[dialect]
        meta = cls(cls.META_SCHEMA, format_checker=None)
        try:
            problems = [_problem(e) for e in meta.iter_errors(schema)][:MAX_ERRORS]
        except RecursionError:
            problems = [SchemaProblem((), "schema is nested too deeply", "depth")]
    found = _walk_patterns(schema) if patterns is True else patterns or ()
    for path, patrn in found:
        try:
            compile_pattern(patrn)
        except ValueError as exc:
            problems.append(SchemaProblem(path, str(exc), "pattern"))
    return problems


__all__ = [
    "MAX_PATTERN_DEPTH",
    "SchemaProblem",
    "Validator",
    "cached_validator",
    "check_pattern_depth",
    "check_schema",
    "compile_pattern",
    "group_depth",
    "make_validator",
    "pattern_search",
    "walk_accepts",
]
