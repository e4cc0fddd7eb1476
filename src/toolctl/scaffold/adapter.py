"""Run an ordinary Python function as a toolctl handler: ``handler = from_function(fn)``.

A handler takes the validated arguments as one dict (``fn(input)``); an existing function takes
them as parameters. The adapter passes each argument by name (positional-only ones by
position), turns JSON values into what the annotations ask for (dataclasses, pydantic models,
enums, dates, UUIDs, paths, nested in lists, tuples, sets and dicts), and turns the return
value back into JSON, wrapped as ``{"result": value}`` exactly when the drafted
``outputSchema`` wraps it. ``toolctl new --from`` writes a module that does this.
"""

from __future__ import annotations

import dataclasses
import datetime
import enum
import inspect
import pathlib
import typing
import uuid
from collections.abc import Callable
from typing import Any, get_args, get_origin

from typing_extensions import get_type_hints, is_typeddict

from toolctl.scaffold.introspect import RESULT_KEY, declared_output, signature_hints
from toolctl.scaffold.types import (
    UNION_TYPES,
    SchemaBuilder,
    is_pydantic_model,
    strip_annotated,
)

_FROM_TEXT: dict[Any, Callable[[str], Any]] = {
    datetime.datetime: lambda s: datetime.datetime.fromisoformat(s.replace("Z", "+00:00")),
    datetime.date: datetime.date.fromisoformat,
    datetime.time: lambda s: datetime.time.fromisoformat(s.replace("Z", "+00:00")),
    uuid.UUID: uuid.UUID,
    pathlib.Path: pathlib.Path,
}


def to_python(value: Any, tp: Any) -> Any:
    """``value`` (JSON) as an instance of annotation ``tp`` where the annotation asks for one."""
    tp, _ = strip_annotated(tp)
    if value is None:
        return None
    origin, args = get_origin(tp), get_args(tp)
    if origin in UNION_TYPES:
        members = [a for a in args if a is not type(None)]
        return to_python(value, members[0]) if len(members) == 1 else value
    if origin is not None:
        return _generic_to_python(value, origin, args)
    if tp in _FROM_TEXT and isinstance(value, str):
        return _FROM_TEXT[tp](value)
    if isinstance(tp, type) and issubclass(tp, enum.Enum):
        return tp(value)
    if isinstance(tp, type) and is_pydantic_model(tp):
        return typing.cast(Any, tp).model_validate(value)
    is_record = isinstance(tp, type) and (dataclasses.is_dataclass(tp) or is_typeddict(tp))
    if is_record and isinstance(value, dict):
        hints = get_type_hints(tp, include_extras=True)
        fields = {k: to_python(v, hints.get(k, Any)) for k, v in value.items()}
        return fields if is_typeddict(tp) else tp(**fields)
    return value


def _generic_to_python(value: Any, origin: Any, args: tuple[Any, ...]) -> Any:
    if isinstance(value, list) and args:
        if origin is tuple:
            if len(args) == 2 and args[1] is Ellipsis:
                return tuple(to_python(v, args[0]) for v in value)
            return tuple(to_python(v, a) for v, a in zip(value, args, strict=False))
        items = [to_python(v, args[0]) for v in value]
        return set(items) if origin in (set, frozenset) else items
    if isinstance(value, dict) and len(args) == 2:
        return {k: to_python(v, args[1]) for k, v in value.items()}
    return value


def to_json(value: Any) -> Any:
    """A return value as JSON data: models, dataclasses, enums, dates, UUIDs, paths, tuples."""
    if is_pydantic_model(type(value)):
        return value.model_dump(mode="json", by_alias=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: to_json(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, enum.Enum):
        return to_json(value.value)
    if isinstance(value, (datetime.date, datetime.time)):
        return value.isoformat()
    if isinstance(value, (uuid.UUID, pathlib.PurePath)):
        return str(value)
    if isinstance(value, dict):
        return {str(k): to_json(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        return [to_json(v) for v in value]
    return value


def from_function(fn: Callable[..., Any]) -> Callable[[dict[str, Any]], Any]:
    """A handler ``handler(input)`` that calls ``fn`` with the input as its arguments.

    The result is sync or async as ``fn`` is. Its signature has one parameter, so the runtime
    never mistakes ``fn``'s second parameter for the tool context.
    """
    signature, hints, _ = signature_hints(fn)
    wraps = (declared_output(signature, hints, SchemaBuilder()) or (None, False))[1]
    params = signature.parameters

    def arguments(data: dict[str, Any]) -> tuple[list[Any], dict[str, Any]]:
        args: list[Any] = []
        kwargs: dict[str, Any] = {}
        for name, param in params.items():
            if name not in data:
                continue
            converted = to_python(data[name], hints.get(name, Any))
            if param.kind is param.POSITIONAL_ONLY:
                args.append(converted)
            else:
                kwargs[name] = converted
        return args, kwargs

    def finish(result: Any) -> Any:
        data = to_json(result)
        return {RESULT_KEY: data} if wraps else data

    if inspect.iscoroutinefunction(fn):

        async def async_handler(input: dict[str, Any]) -> Any:
            args, kwargs = arguments(input)
            return finish(await fn(*args, **kwargs))

        handler: Callable[[dict[str, Any]], Any] = async_handler
    else:

        def sync_handler(input: dict[str, Any]) -> Any:
            args, kwargs = arguments(input)
            return finish(fn(*args, **kwargs))

        handler = sync_handler
    handler.__name__ = getattr(fn, "__name__", "handler")
    handler.__doc__ = f"toolctl handler calling {getattr(fn, '__qualname__', fn)!s}."
    return handler
