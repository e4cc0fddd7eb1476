"""A tool declaration drafted from a Python function's signature, type hints and docstring.

:func:`describe_function` reads an already imported function (the caller imports it) and
returns a :class:`ToolDraft`: the input schema (one property per parameter; a default makes a
parameter optional, and ``Optional[X] = None`` is declared as ``X``, not as a union with
null), the output schema from the return annotation (wrapped as ``{"result": ...}`` when the
function returns something other than an object, as MCP's structured content must be an object),
the descriptions from the docstring, and every :class:`~toolctl.scaffold.types.Gap`: what the
function does not say and a declaration must not guess.
"""

from __future__ import annotations

import inspect
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from typing_extensions import get_type_hints

from toolctl.scaffold.docstrings import field_docs, parse_docstring
from toolctl.scaffold.types import (
    NO_DEFAULT,
    Gap,
    Schema,
    SchemaBuilder,
    annotate,
    optional_member,
    read_metadata,
    strip_annotated,
)

RESULT_KEY = "result"
_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,128}$")


@dataclass
class ToolDraft:
    """A declaration for one function, before it is written as YAML."""

    name: str
    title: str
    description: str
    input_schema: Schema
    output_schema: Schema | None
    wraps_result: bool = False
    gaps: list[Gap] = field(default_factory=list)


def signature_hints(fn: Callable[..., Any]) -> tuple[inspect.Signature, dict[str, Any], str | None]:
    """(signature, resolved annotations, why they could not be resolved or None)."""
    signature = inspect.signature(fn)
    try:
        return signature, get_type_hints(fn, include_extras=True), None
    except Exception as exc:  # a forward reference to a name the module does not define
        raw = {p.name: p.annotation for p in signature.parameters.values()}
        raw = {k: v for k, v in raw.items() if v is not inspect.Parameter.empty}
        return signature, raw, f"{type(exc).__name__}: {exc}"


def output_schema(annotation: Any, builder: SchemaBuilder) -> tuple[Schema | None, bool]:
    """(outputSchema, whether the result is wrapped as ``{"result": value}``) for a return
    annotation; (None, False) for ``None``. The handler adapter makes the same decision."""
    if annotation is None or annotation is type(None):
        return None, False
    schema = builder.build(annotation, "return")
    if schema.get("type") == "object":
        return schema, False
    wrapped: Schema = {
        "type": "object",
        "properties": {RESULT_KEY: schema},
        "required": [RESULT_KEY],
        "additionalProperties": False,
    }
    return wrapped, True


def declared_output(
    signature: inspect.Signature, hints: dict[str, Any], builder: SchemaBuilder
) -> tuple[Schema | None, bool] | None:
    """:func:`output_schema` of the function's return annotation; None when it has none."""
    if signature.return_annotation is inspect.Signature.empty:
        return None
    return output_schema(hints.get("return", signature.return_annotation), builder)


def valid_name(name: str) -> bool:
    """Whether ``name`` is a tool name (letters, digits, ``_.-``; at most 128): also a file name."""
    return _NAME.match(name) is not None


def describe_function(fn: Callable[..., Any], *, name: str | None = None) -> ToolDraft:
    """Draft the declaration of ``fn`` (named ``name``, by default the function's name)."""
    tool_name = str(name or getattr(fn, "__name__", "tool"))
    signature, hints, unresolved = signature_hints(fn)
    doc = parse_docstring(inspect.getdoc(fn))
    gaps: list[Gap] = []
    if unresolved:
        gaps.append(Gap("annotations", f"cannot resolve the type hints ({unresolved})"))
    if not valid_name(tool_name):
        gaps.append(Gap("name", f"{tool_name!r} is not a valid tool name (letters, digits, _.-)"))
    builder = SchemaBuilder(field_docs)
    input_schema = _input_schema(signature, hints, doc.params, builder)
    out_builder = SchemaBuilder(field_docs)
    declared = declared_output(signature, hints, out_builder)
    if declared is None:
        gaps.append(Gap("return", "no return annotation, so no outputSchema (annotate it)"))
    out, wraps = declared or (None, False)
    if out is not None:
        out = _with_defs(out, out_builder.defs)
        if doc.returns and "description" not in out:
            target = out["properties"][RESULT_KEY] if wraps else out
            target.setdefault("description", doc.returns)
    description = doc.description
    if not description:
        gaps.append(Gap("description", "no docstring: say what the tool does and when to use it"))
        description = f"TODO: say what {tool_name} does and when a model should call it."
    return ToolDraft(
        name=tool_name,
        title=tool_name.replace("_", " ").replace("-", " ").strip().capitalize(),
        description=description,
        input_schema=_with_defs(input_schema, builder.defs),
        output_schema=out,
        wraps_result=wraps,
        gaps=[*gaps, *builder.gaps, *out_builder.gaps],
    )


def _with_defs(schema: Schema, defs: dict[str, Schema]) -> Schema:
    return {**schema, "$defs": dict(sorted(defs.items()))} if defs else schema


def _input_schema(
    signature: inspect.Signature,
    hints: dict[str, Any],
    docs: dict[str, str],
    builder: SchemaBuilder,
) -> Schema:
    properties: Schema = {}
    required: list[str] = []
    for param in signature.parameters.values():
        where = f"parameter {param.name!r}"
        if param.kind is param.VAR_POSITIONAL:
            builder.gap(where, "*args cannot be passed by name; declare each argument instead")
            continue
        if param.kind is param.VAR_KEYWORD:
            builder.gap(where, "**kwargs is not declared; add the keys you accept as parameters")
            continue
        schema, needed = _parameter(param, hints, builder, where)
        own = read_metadata(strip_annotated(hints.get(param.name))[1]).description
        if param.name in docs and not own:  # the docstring says more than the type's class doc
            schema = {**schema, "description": docs[param.name]}
            schema = {"description": schema.pop("description"), **schema}
        properties[param.name] = schema
        if needed:
            required.append(param.name)
    out: Schema = {"type": "object", "properties": properties}
    if required:
        out["required"] = required
    out["additionalProperties"] = False
    return out


def _parameter(
    param: inspect.Parameter, hints: dict[str, Any], builder: SchemaBuilder, where: str
) -> tuple[Schema, bool]:
    """(the parameter's schema, whether it is required)."""
    if param.name not in hints:
        schema = builder.gap(where, "no type annotation (annotate it; the schema is left open)")
        return schema, param.default is param.empty
    annotation = hints[param.name]
    _, metadata = strip_annotated(annotation)
    default = param.default
    if default is param.empty:  # `x: Annotated[int, Field(default=3)]`
        field_default = read_metadata(metadata).default
        default = param.empty if field_default is NO_DEFAULT else field_default
    member = optional_member(annotation)
    if default is None and member is not None:
        # `x: Optional[int] = None`: leaving it out is how a caller says None.
        return builder.build(annotate(member, metadata), where), False
    schema = builder.build(annotation, where)
    if default is param.empty:
        return schema, True
    builder.set_default(schema, default, where)
    return schema, False
