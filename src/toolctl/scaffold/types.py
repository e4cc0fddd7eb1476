"""Python type annotations as JSON Schema (2020-12), for ``toolctl new --from``.

:class:`SchemaBuilder` turns an annotation into the schema a tool declaration needs: builtins,
``Literal`` and ``Enum`` (``enum``), ``Optional``/unions, lists, tuples, sets and dicts,
``Annotated[..., Field(...)]`` and ``annotated_types`` constraints, ``TypedDict``, dataclasses
and pydantic models (read through their public attributes, so pydantic is never imported here).
What it cannot express faithfully is recorded as a :class:`Gap` and given the empty schema
``{}`` (any value) rather than a guess. Recursive classes become ``$defs`` entries.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import math
import pathlib
import re
import types
import typing
import uuid
from collections.abc import Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from typing import Any, get_args, get_origin

import typing_extensions
from typing_extensions import get_type_hints, is_typeddict

from toolctl.schemamessages import json_type

Schema = dict[str, Any]

_SIMPLE: dict[Any, Schema] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
    datetime.datetime: {"type": "string", "format": "date-time"},
    datetime.date: {"type": "string", "format": "date"},
    datetime.time: {"type": "string", "format": "time"},
    uuid.UUID: {"type": "string", "format": "uuid"},
    pathlib.Path: {"type": "string"},
}
_SEQUENCES = {list, Sequence, typing.List, typing.Sequence}  # noqa: UP006
_SETS = {set, frozenset, AbstractSet, typing.Set, typing.FrozenSet, typing.AbstractSet}  # noqa: UP006
_MAPPINGS = {dict, Mapping, typing.Dict, typing.Mapping}  # noqa: UP006
# annotated_types / pydantic metadata attribute → JSON Schema keyword, by the value's type.
_NUMERIC = {"ge": "minimum", "le": "maximum", "gt": "exclusiveMinimum", "lt": "exclusiveMaximum"}
_LENGTHS = {
    "string": ("minLength", "maxLength"),
    "array": ("minItems", "maxItems"),
    "object": ("minProperties", "maxProperties"),
}


def _qualifier(name: str) -> set[Any]:
    return {getattr(m, name) for m in (typing, typing_extensions) if hasattr(m, name)}


_QUALIFIERS = _qualifier("Required") | _qualifier("NotRequired") | _qualifier("ReadOnly")
UNION_TYPES: tuple[Any, ...] = (typing.Union, getattr(types, "UnionType", typing.Union))


@dataclass(frozen=True)
class Gap:
    """Something the function does not say precisely enough to declare (``where``: a path)."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


NO_DEFAULT: Any = type("NoDefault", (), {"__repr__": lambda self: "NO_DEFAULT"})()
"""An :class:`Extras` default meaning "none given" (None is a default like any other)."""


@dataclass
class Extras:
    """What ``Annotated`` metadata or a model field adds to a type: constraints and docs."""

    constraints: Schema = field(default_factory=dict)
    description: str | None = None
    default: Any = NO_DEFAULT
    examples: list[Any] | None = None


def _shown_default(value: Any) -> str:
    """A short ``repr`` of a default for a gap message (never long, never raising)."""
    try:
        text = repr(value)
    except Exception:  # a default's own __repr__ is user code
        text = f"<{type(value).__name__}>"
    return text if len(text) <= 60 else text[:57] + "..."


def json_value(value: Any) -> tuple[bool, Any]:
    """(True, the JSON form) for a default that JSON can carry; (False, None) otherwise."""
    if isinstance(value, enum.Enum):
        return json_value(value.value)
    if isinstance(value, float) and not math.isfinite(value):
        return False, None  # NaN and infinities are not JSON (YAML's .nan fails validate)
    if value is None or isinstance(value, (str, bool, int, float)):
        return True, value
    if isinstance(value, (list, tuple)):
        items = [json_value(v) for v in value]
        return all(ok for ok, _ in items), [v for _, v in items]
    if isinstance(value, dict) and all(isinstance(k, str) for k in value):
        pairs = {k: json_value(v) for k, v in value.items()}
        return all(ok for ok, _ in pairs.values()), {k: v for k, (_, v) in pairs.items()}
    return False, None


def is_pydantic_model(tp: Any) -> bool:
    """A pydantic v2 model class, recognised by shape (pydantic is not imported)."""
    return isinstance(tp, type) and hasattr(tp, "model_fields") and hasattr(tp, "model_validate")


def annotate(tp: Any, metadata: tuple[Any, ...]) -> Any:
    """``Annotated[tp, *metadata]`` (``tp`` itself without metadata)."""
    args = (tp, *metadata)
    return typing.cast(Any, typing.Annotated)[args] if metadata else tp


def strip_annotated(tp: Any) -> tuple[Any, tuple[Any, ...]]:
    """(the bare type, its ``Annotated`` metadata), without TypedDict key qualifiers
    (``Required``, ``NotRequired``, ``ReadOnly``: the class's required keys say that)."""
    metadata: tuple[Any, ...] = ()
    while True:
        origin = get_origin(tp)
        if origin is typing.Annotated:
            args = get_args(tp)
            tp, metadata = args[0], (*metadata, *args[1:])
        elif origin in _QUALIFIERS:
            tp = get_args(tp)[0]
        else:
            return tp, metadata


def optional_member(tp: Any) -> Any | None:
    """``X`` for ``Optional[X]`` / ``X | None`` (one non-None member), else None."""
    bare, _ = strip_annotated(tp)
    if get_origin(bare) not in UNION_TYPES:
        return None
    members = [a for a in get_args(bare) if a is not type(None)]
    return members[0] if len(members) == 1 and len(get_args(bare)) == 2 else None


def read_metadata(metadata: Sequence[Any]) -> Extras:
    """Constraints and docs from ``Annotated`` metadata: pydantic ``Field(...)``, annotated_types
    objects (``Ge(1)``, ``MaxLen(5)``, ...) and a plain string (the description)."""
    out = Extras()
    for item in metadata:
        if isinstance(item, str):
            out.description = item
            continue
        inner = getattr(item, "metadata", None)
        if type(item).__name__ == "FieldInfo":
            out.description = getattr(item, "description", None) or out.description
            examples = getattr(item, "examples", None)
            out.examples = list(examples) if examples else out.examples
            default = getattr(item, "default", NO_DEFAULT)
            if type(default).__name__ != "PydanticUndefinedType" and default is not ...:
                out.default = default
            if isinstance(inner, list):
                out.constraints.update(read_metadata(inner).constraints)
            continue
        for attr in ("ge", "le", "gt", "lt", "multiple_of", "min_length", "max_length"):
            if getattr(item, attr, None) is not None:
                out.constraints[attr] = getattr(item, attr)
        if isinstance(getattr(item, "pattern", None), str):
            out.constraints["pattern"] = item.pattern
    return out


def apply_constraints(schema: Schema, constraints: Schema) -> Schema:
    """``schema`` with the ``ge``/``max_length``/... constraints as JSON Schema keywords."""
    out = dict(schema)
    kind = out.get("type")
    for name, value in constraints.items():
        if name in _NUMERIC:
            out[_NUMERIC[name]] = value
        elif name == "multiple_of":
            out["multipleOf"] = value
        elif name == "pattern":
            out["pattern"] = value
        elif name in ("min_length", "max_length") and isinstance(kind, str) and kind in _LENGTHS:
            out[_LENGTHS[kind][name == "max_length"]] = value
    return out


def documented(schema: Schema, description: str | None) -> Schema:
    """``schema`` with ``description`` first (a ``$ref`` keeps its siblings in 2020-12)."""
    return {"description": description, **schema} if description else schema


class SchemaBuilder:
    """Builds schemas for one function; collects gaps and the ``$defs`` of recursive classes.

    ``describe_fields`` gives (class) → {field: description} from the class's docstring (the
    introspector passes its docstring parser in, so this module stays free of it).
    """

    def __init__(
        self, describe_fields: typing.Callable[[type], dict[str, str]] | None = None
    ) -> None:
        self.gaps: list[Gap] = []
        self.defs: dict[str, Schema] = {}
        self._stack: list[type] = []
        self._recursive: set[type] = set()
        self._describe_fields = describe_fields or (lambda cls: {})

    def set_default(self, schema: Schema, default: Any, where: str) -> None:
        """Put ``default`` in ``schema`` when JSON can carry it; else leave it out and record
        the gap (NaN, infinities, objects: the declaration would not validate or load)."""
        ok, value = json_value(default)
        if ok:
            schema["default"] = value
        else:
            self.gaps.append(
                Gap(where, f"the default {_shown_default(default)} is not JSON; left out")
            )

    def gap(self, where: str, message: str) -> Schema:
        """Record a gap and return the schema that promises nothing (``{}``)."""
        self.gaps.append(Gap(where, message))
        return {}

    def build(self, tp: Any, where: str) -> Schema:
        """The schema of annotation ``tp`` (``where`` names it in gap messages)."""
        bare, metadata = strip_annotated(tp)
        extra = read_metadata(metadata)
        schema = apply_constraints(self._bare(bare, where), extra.constraints)
        if extra.examples:
            schema["examples"] = extra.examples
        return documented(schema, extra.description)

    def _bare(self, tp: Any, where: str) -> Schema:
        if tp is Any or tp is object:
            return {}
        if isinstance(tp, (typing.TypeVar, str, typing.ForwardRef)):
            return self.gap(where, f"cannot resolve the type {tp!r}")
        supertype = getattr(tp, "__supertype__", None)  # typing.NewType
        if supertype is not None:
            return self._bare(supertype, where)
        if tp in _SIMPLE:
            return dict(_SIMPLE[tp])
        origin = get_origin(tp)
        if origin is not None:
            return self._generic(tp, origin, where)
        if isinstance(tp, type) and issubclass(tp, enum.Enum):
            return self._enum(tp, where)
        if tp in _SEQUENCES or tp is tuple:
            return {"type": "array"}
        if tp in _SETS:
            return {"type": "array", "uniqueItems": True}
        if tp in _MAPPINGS:
            return {"type": "object"}
        if isinstance(tp, type) and (
            is_typeddict(tp) or dataclasses.is_dataclass(tp) or is_pydantic_model(tp)
        ):
            return self._class(tp, where)
        return self.gap(where, f"type {type_name(tp)} has no JSON Schema equivalent")

    def _generic(self, tp: Any, origin: Any, where: str) -> Schema:
        args = get_args(tp)
        if origin is typing.Literal:
            return literal_schema(args)
        if origin in UNION_TYPES:
            return self._union(args, where)
        if not args and (origin in _SEQUENCES or origin in _SETS or origin in _MAPPINGS):
            return self._bare(origin, where)
        if origin in _SEQUENCES:
            return {"type": "array", "items": self.build(args[0], f"{where}[]")}
        if origin in _SETS:
            item = self.build(args[0], f"{where}[]")
            return {"type": "array", "items": item, "uniqueItems": True}
        if origin is tuple:
            return self._tuple(args, where)
        if origin in _MAPPINGS:
            key = strip_annotated(args[0])[0] if args else str
            if key is not str:
                message = f"dict keys of type {type_name(key)}: JSON object keys are strings"
                return self.gap(where, message)
            values = self.build(args[1], f"{where}{{}}")
            return (
                {"type": "object", "additionalProperties": values} if values else {"type": "object"}
            )
        if isinstance(origin, type) and (is_typeddict(origin) or dataclasses.is_dataclass(origin)):
            return self.gap(where, f"generic class {type_name(tp)} is not supported")
        return self.gap(where, f"type {type_name(tp)} has no JSON Schema equivalent")

    def _tuple(self, args: tuple[Any, ...], where: str) -> Schema:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": self.build(args[0], f"{where}[]")}
        if not args or args == ((),):
            return {"type": "array", "maxItems": 0}
        items = [self.build(a, f"{where}[{i}]") for i, a in enumerate(args)]
        n = len(items)
        return {"type": "array", "prefixItems": items, "minItems": n, "maxItems": n}

    def _union(self, args: tuple[Any, ...], where: str) -> Schema:
        members = [self.build(a, where) for a in args]
        simple = [m.get("type") for m in members if set(m) == {"type"}]
        if len(simple) == len(members) and all(isinstance(t, str) for t in simple):
            return {"type": list(dict.fromkeys(typing.cast(list[str], simple)))}
        return {"anyOf": members}

    def _enum(self, tp: type[enum.Enum], where: str) -> Schema:
        values = [m.value for m in tp]
        if not all(json_value(v)[0] for v in values):
            return self.gap(where, f"enum {tp.__qualname__} has values JSON cannot carry")
        schema = literal_schema(tuple(values))
        return documented(schema, class_doc(tp))

    def _class(self, cls: type, where: str) -> Schema:
        if cls in self._stack:
            self._recursive.add(cls)
            return {"$ref": f"#/$defs/{cls.__name__}"}
        self._stack.append(cls)
        try:
            schema = documented(self.object_schema(cls, where), class_doc(cls))
        finally:
            self._stack.pop()
        if cls in self._recursive:
            self.defs[cls.__name__] = schema
            return {"$ref": f"#/$defs/{cls.__name__}"}
        return schema

    def object_schema(self, cls: type, where: str) -> Schema:
        """The closed object schema of a TypedDict, dataclass or pydantic model."""
        docs = self._describe_fields(cls)
        properties: Schema = {}
        required: list[str] = []
        for name, (tp, info, needed) in class_fields(cls, where, self).items():
            schema = self.build(tp, f"{where}.{name}")
            if info.default is not NO_DEFAULT:
                self.set_default(schema, info.default, f"{where}.{name}")
            description = info.description or docs.get(name)
            if description:  # the field's own words win over its type's class docstring
                schema = documented(
                    {k: v for k, v in schema.items() if k != "description"}, description
                )
            properties[name] = schema
            if needed:
                required.append(name)
        out: Schema = {"type": "object", "properties": properties}
        if required:
            out["required"] = required
        out["additionalProperties"] = False
        return out


def type_name(tp: Any) -> str:
    """An annotation as written in code (``Callable[[int], int]``, not its module path)."""
    if isinstance(tp, type) and not get_args(tp):
        return tp.__qualname__
    return re.sub(r"\b(?:typing|typing_extensions|collections\.abc|builtins)\.", "", repr(tp))


def literal_schema(values: tuple[Any, ...]) -> Schema:
    """``enum`` of the values (JSON forms), with ``type`` when they share one."""
    plain = [json_value(v)[1] for v in values]
    kinds = {json_type(v) for v in plain}
    schema: Schema = {"type": kinds.pop()} if len(kinds) == 1 else {}
    schema["enum"] = plain
    return schema


def class_doc(cls: type) -> str | None:
    """A class's own docstring (not a dataclass's generated signature, not an Enum's default)."""
    doc = cls.__dict__.get("__doc__")
    if not isinstance(doc, str) or not doc.strip():
        return None
    if dataclasses.is_dataclass(cls) and doc.startswith(f"{cls.__name__}("):
        return None
    if issubclass(cls, enum.Enum) and doc.startswith("An enumeration"):
        return None
    first = doc.strip().split("\n\n", 1)[0]
    return " ".join(first.split())


def class_fields(
    cls: type, where: str, builder: SchemaBuilder
) -> dict[str, tuple[Any, Extras, bool]]:
    """name → (annotation, extras, required) for a TypedDict, dataclass or pydantic model."""
    if is_pydantic_model(cls):
        return _model_fields(cls)
    try:
        hints = get_type_hints(cls, include_extras=True)
    except Exception as exc:  # a forward reference that does not resolve
        builder.gap(where, f"cannot read the annotations of {cls.__qualname__}: {exc}")
        return {}
    if is_typeddict(cls):
        return {n: (tp, Extras(), _typeddict_required(cls, n, tp)) for n, tp in hints.items()}
    out: dict[str, tuple[Any, Extras, bool]] = {}
    for f in dataclasses.fields(cls):
        extra = Extras(description=f.metadata.get("description"))
        if f.default is not dataclasses.MISSING:
            extra.default = f.default
        needed = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
        out[f.name] = (hints.get(f.name, Any), extra, needed)
    return out


def _typeddict_required(cls: type, name: str, tp: Any) -> bool:
    # An explicit Required/NotRequired decides; `__required_keys__` misses them when the
    # annotations are strings (`from __future__ import annotations`) on some Pythons.
    origin = get_origin(tp)
    if origin in _qualifier("NotRequired"):
        return False
    if origin in _qualifier("Required"):
        return True
    return name in getattr(cls, "__required_keys__", frozenset([name]))


def _model_fields(cls: type) -> dict[str, tuple[Any, Extras, bool]]:
    out: dict[str, tuple[Any, Extras, bool]] = {}
    for name, info in typing.cast(Any, cls).model_fields.items():
        tp = info.annotation
        if info.metadata:
            tp = annotate(tp, tuple(info.metadata))
        extra = Extras(description=info.description, examples=info.examples)
        needed = bool(info.is_required())
        if not needed and info.default_factory is None:
            extra.default = info.default
        out[info.alias or name] = (tp, extra, needed)
    return out
