"""The one JSON Schema validator factory, and meta-validation of user schemas.

Every path that validates data against a user schema (validate, lint, test, run, serve) builds its
validator here, so the safety rules hold everywhere:

* no ``$ref`` is ever retrieved: the registry refuses every URI (external files are bundled into the
  schema by :mod:`toolctl.refs` before it gets here);
* ``pattern`` and ``patternProperties`` use ECMA-262-like semantics (``$`` only at the very end,
  ``\\d``/``\\w`` ASCII) evaluated by ``regex`` with a time limit, so a hostile pattern cannot hang;
* ``format`` is an assertion: ``date-time``, ``uri``, ``hostname``, ``email`` ... reject bad
  values, with the checker packages imported only when a value of that format is checked
  (:mod:`toolctl.schemaformats`);
* error lists are capped, and runaway recursion becomes an error instead of a crash.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from toolctl.diagnostics import json_pointer

JsonPath = tuple[str | int, ...]

DEFAULT_DIALECT = "https://json-schema.org/draft/2020-12/schema"
PATTERN_TIMEOUT = 0.25
MAX_ERRORS = 20
MAX_PATTERN_DEPTH = 50
"""Deepest group nesting a ``pattern`` may have: regex parsers recurse once per group."""
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


def _translate(pattern: str) -> str:
    """Rewrite the Python-only meanings of an ECMA-262 pattern (``$``, ``\\d``, ``\\w``)."""
    out: list[str] = []
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\" and i + 1 < len(pattern):
            nxt = pattern[i + 1]
            table = (
                {"d": "0-9", "w": "A-Za-z0-9_"}
                if in_class
                else {"d": "[0-9]", "D": "[^0-9]", "w": "[A-Za-z0-9_]", "W": "[^A-Za-z0-9_]"}
            )
            out.append(table.get(nxt, ch + nxt))
            i += 2
            continue
        if ch == "[" and not in_class:
            in_class = True
        elif ch == "]" and in_class:
            in_class = False
        elif ch == "$" and not in_class:
            ch = r"\Z"
        out.append(ch)
        i += 1
    return "".join(out)


def group_depth(pattern: str) -> int:
    """How deeply the groups of ``pattern`` nest, in one pass (escapes and classes skipped)."""
    depth = deepest = 0
    i, in_class = 0, False
    while i < len(pattern):
        ch = pattern[i]
        if ch == "\\":
            i += 2
            continue
        if in_class:
            in_class = ch != "]"
        elif ch == "[":
            in_class = True
        elif ch == "(":
            depth += 1
            deepest = max(deepest, depth)
        elif ch == ")" and depth:
            depth -= 1
        i += 1
    return deepest


def check_pattern_depth(pattern: str) -> None:
    """``ValueError`` when ``pattern`` nests groups deeper than :data:`MAX_PATTERN_DEPTH`."""
    depth = group_depth(pattern)
    if depth > MAX_PATTERN_DEPTH:
        raise ValueError(
            f"regular expression nests groups {depth} deep (at most {MAX_PATTERN_DEPTH}): "
            "flatten it"
        )


@functools.lru_cache(maxsize=1024)
def compile_pattern(pattern: str) -> Any:
    """Compile an ECMA-262-style pattern; raises ``ValueError`` if it is not a valid regex.

    Too deep a nesting of groups is refused before the (recursive) regex parser sees it.
    """
    import regex

    check_pattern_depth(pattern)
    try:
        return regex.compile(_translate(pattern))
    except regex.error as exc:
        raise ValueError(f"invalid regular expression {pattern!r}: {exc}") from None
    except RecursionError:  # a shape the depth check does not count
        raise ValueError("regular expression is nested too deeply: simplify it") from None


def pattern_search(pattern: str, text: str, timeout: float = PATTERN_TIMEOUT) -> bool:
    """True when ``pattern`` matches in ``text``; ``TimeoutError`` if it takes too long."""
    return compile_pattern(pattern).search(text, timeout=timeout) is not None


def _kw_pattern(validator: Any, patrn: str, instance: Any, schema: Any) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "string"):
        return
    try:
        if not pattern_search(patrn, instance):
            yield ValidationError(f"{instance!r} does not match {patrn!r}")
    except TimeoutError:
        yield ValidationError(f"pattern {patrn!r} took too long to evaluate on this value")
    except ValueError as exc:
        yield ValidationError(str(exc))


def _kw_pattern_properties(
    validator: Any, pattern_props: dict[str, Any], instance: Any, schema: Any
) -> Iterator[Any]:
    from jsonschema.exceptions import ValidationError

    if not validator.is_type(instance, "object"):
        return
    for patrn, subschema in pattern_props.items():
        for key, value in instance.items():
            try:
                hit = pattern_search(patrn, key)
            except (TimeoutError, ValueError) as exc:
                yield ValidationError(f"pattern {patrn!r} could not be evaluated: {exc}")
                continue
            if hit:
                yield from validator.descend(value, subschema, path=key, schema_path=patrn)


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
    from toolctl.schemaformats import enforced_formats as enforced

    return enforced(dialect_class(schema))


@functools.cache
def _validator_class(dialect: str) -> Any:
    base = _dialect_classes()[dialect]
    from jsonschema import validators

    return validators.extend(  # type: ignore[no-untyped-call]
        base, {"pattern": _kw_pattern, "patternProperties": _kw_pattern_properties}
    )


def _problem(err: Any) -> SchemaProblem:
    from toolctl.schemamessages import message_of  # JSON's words: null, not None

    return SchemaProblem(tuple(err.absolute_path), message_of(err), str(err.validator))


# ---------------------------------------------------------------- the factory


# ---------------------------------------------------------------- the fast accept

# Keywords whose meaning jsonschema-rs and python-jsonschema share exactly. A schema made only of
# these (and annotations, x- keys) is first checked by jsonschema-rs, about fifty times faster:
# a valid value is accepted at once, anything else goes to python-jsonschema for the problems.
# Left out: format (asserted here, not by jsonschema-rs), pattern/patternProperties (ECMA
# regexes here), $ref (the registry's resolver), multipleOf and uniqueItems (number equality).
_FAST_KEYWORDS = frozenset(
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
_ONE_SUBSCHEMA = frozenset({"additionalProperties", "items", "not"})
_SUBSCHEMA_LISTS = frozenset({"prefixItems", "anyOf", "oneOf", "allOf"})


def _plain(schema: Any) -> bool:
    """True when ``schema`` uses only :data:`_FAST_KEYWORDS` (and ``x-`` keys), all the way down."""
    if isinstance(schema, bool):
        return True
    if not isinstance(schema, dict):
        return False
    for key, value in schema.items():
        if not isinstance(key, str):
            return False
        if key.startswith("x-"):
            continue
        if key not in _FAST_KEYWORDS:
            return False
        if key == "properties":
            if not isinstance(value, dict) or not all(map(_plain, value.values())):
                return False
        elif key in _ONE_SUBSCHEMA:
            if not _plain(value):
                return False
        elif key in _SUBSCHEMA_LISTS and (
            not isinstance(value, list) or not all(map(_plain, value))
        ):
            return False
    return True


def _fast_accept(schema: Any) -> Callable[[Any], bool] | None:
    """jsonschema-rs's ``is_valid`` for a plain 2020-12 schema; None for any other schema."""
    if dialect_of(schema) != DEFAULT_DIALECT:
        return None
    body = (
        {k: v for k, v in schema.items() if k != "$schema"} if isinstance(schema, dict) else schema
    )
    if not _plain(body):
        return None
    try:
        import jsonschema_rs

        fn: Callable[[Any], bool] = jsonschema_rs.Draft202012Validator(body).is_valid
    except Exception:  # not installed, or a schema it does not take: python-jsonschema only
        return None
    return fn


_UNSET: Any = object()


class Validator:
    """A compiled validator for one schema. Build it once; call it many times.

    Use :func:`make_validator` (or :func:`cached_validator`) rather than this class directly.
    """

    def __init__(self, schema: Any) -> None:
        self.schema = schema
        self._fast: Callable[[Any], bool] | None = _UNSET  # built on first use
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

    def errors(self, instance: Any, limit: int = MAX_ERRORS) -> list[SchemaProblem]:
        """At most ``limit`` problems, best first; an empty list when valid."""
        if self._fast is _UNSET:
            self._fast = _fast_accept(self.schema)
        if self._fast is not None:
            try:
                if self._fast(instance):
                    return []
            except Exception:  # a value jsonschema-rs cannot take: the full check decides
                pass
        from referencing.exceptions import Unresolvable

        out: list[SchemaProblem] = []
        try:
            for err in self._impl.iter_errors(instance):
                out.append(_problem(err))
                if len(out) >= limit * 5:
                    break
        except RecursionError:
            return [SchemaProblem((), "value is nested too deeply for this schema", "depth")]
        except Unresolvable as exc:
            return [SchemaProblem((), f"schema reference cannot be resolved: {exc}", "$ref")]
        return out[:limit]


def make_validator(schema: Any) -> Validator:
    """The validator factory: every validation of user data goes through here."""
    return Validator(schema)


_CACHE: dict[str, Validator] = {}


def cached_validator(schema: Any) -> Validator:
    """A validator for ``schema``, built once per distinct schema per process."""
    key = json.dumps(schema, sort_keys=True, separators=(",", ":"))
    found = _CACHE.get(key)
    if found is None:
        found = _CACHE[key] = make_validator(schema)
    return found


# ---------------------------------------------------------------- meta-validation


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


def check_schema(schema: Any, *, patterns: bool = True) -> list[SchemaProblem]:
    """Problems that make ``schema`` not a valid JSON Schema of its dialect (empty when fine).

    Uses jsonschema-rs for the common valid case (hundreds of times faster) and python jsonschema
    for located messages when something is wrong. ``patterns=False`` when the caller knows the
    schema has no ``pattern`` or ``patternProperties`` key (their regexes are compiled here).
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
    for path, patrn in _walk_patterns(schema) if patterns else ():
        try:
            compile_pattern(patrn)
        except ValueError as exc:
            problems.append(SchemaProblem(path, str(exc), "pattern"))
    return problems
