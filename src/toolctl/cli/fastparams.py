"""Option values without pydantic: the common parameter types, coerced the way Typer does.

Typer 0.29 coerces every non-flag option through a pydantic ``TypeAdapter``, and importing
pydantic costs more than the rest of a small command (``toolctl validate`` of a few tools).
For the parameter types toolctl's commands use (``str``, ``Path``, enums, plain ints and
floats, and lists of these) this module converts the value itself with Typer's own helpers
(``coerce_cli_path``, ``coerce_cli_choice``) and hands anything else, and every value it
cannot convert, to Typer's pydantic path: error messages and unusual inputs stay Typer's.

It hooks one private method of Typer (``_TyperParameter.get_runtime_param``); when that shape
is not there (another Typer version) nothing is installed and Typer works as it always does.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, get_args, get_origin

_INT = re.compile(r"[-+]?[0-9]+\Z")
_FLOAT = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?\Z")
_installed = False

Convert = Callable[[Any, Any, Any], Any]  # (value, param, ctx) -> value; raises _Slow


class _Slow(Exception):
    """The value needs Typer's own (pydantic) coercion."""


def _convert_str(value: Any, param: Any, ctx: Any) -> Any:
    if isinstance(value, str):
        return value
    raise _Slow


def _convert_bool(value: Any, param: Any, ctx: Any) -> Any:
    if isinstance(value, bool):  # flags (--help, --x/--no-x); "yes", "0" ... go to Typer
        return value
    raise _Slow


def _number(kind: type[Any], pattern: re.Pattern[str], low: Any, high: Any) -> Convert:
    def convert(value: Any, param: Any, ctx: Any) -> Any:
        # a default arrives as the number itself (an int option's default of 5)
        plain = type(value) is kind or (kind is float and type(value) is int)
        if plain or (isinstance(value, str) and pattern.match(value)):
            number = kind(value)
            if (low is None or number >= low) and (high is None or number <= high):
                return number
        raise _Slow  # out of range (Typer's message) or not a plain number

    return convert


def _leaf(annotation: Any, info: Any) -> Convert | None:
    """A converter for one value of ``annotation``, or None to leave it to Typer."""
    from typer import _param_types as types

    if info.parser is not None or getattr(info, "click_type", None) is not None:
        return None
    if isinstance(annotation, type) and issubclass(annotation, enum.Enum):
        choices = tuple(annotation)

        def choice(value: Any, param: Any, ctx: Any) -> Any:
            try:
                return types.coerce_cli_choice(
                    value, choices=choices, case_sensitive=info.case_sensitive, ctx=ctx
                )
            except ValueError:
                raise _Slow from None

        return choice
    if annotation is str:
        return _convert_str
    if annotation is bool:
        return _convert_bool
    if annotation in (int, float) and not info.clamp:
        return _number(annotation, _INT if annotation is int else _FLOAT, info.min, info.max)
    if isinstance(annotation, type) and issubclass(annotation, Path):
        kind = info.path_type or annotation
        if not (isinstance(kind, type) and issubclass(kind, Path)):
            return None

        def path(value: Any, param: Any, ctx: Any) -> Any:
            # Only text that a Path keeps as written: messages quote the path Typer would, and
            # "-" (stdin/stdout when allow_dash) and "dir/" go to Typer's own path.
            if isinstance(value, str) and value != "-" and str(kind(value)) == value:
                value = kind(value)
            if not isinstance(value, kind):
                raise _Slow
            # The same checks as Typer (exists, file_okay, resolve_path, ...): Typer's function.
            return types.coerce_cli_path(value, info, path_type=kind, param=param, ctx=ctx)

        return path
    return None


def _converter(annotation: Any, info: Any) -> Convert | None:
    if get_origin(annotation) is list:
        (item,) = get_args(annotation) or (None,)
        one = _leaf(item, info)
        if one is None:
            return None

        def many(value: Any, param: Any, ctx: Any) -> Any:
            items = value if isinstance(value, (list, tuple)) else [value]
            return [one(v, param, ctx) for v in items]

        return many
    return _leaf(annotation, info)


def install() -> None:
    """Route the common parameter types around pydantic (once; no-op on other Typer shapes)."""
    global _installed
    if _installed:
        return
    _installed = True
    try:
        from typer import core
        from typer._coercion import RuntimeParam, build_runtime_param

        original = core._TyperParameter.get_runtime_param
    except (ImportError, AttributeError):  # pragma: no cover - another Typer: keep its own path
        return

    @dataclass(frozen=True)
    class FastParam(RuntimeParam):
        """Converts with ``convert``; falls back to Typer's adapter for anything else."""

        convert: Convert
        descriptor: Any

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            try:
                return self.convert(value, param, ctx)
            except _Slow:
                slow = build_runtime_param(self.descriptor)
                return slow._coerce_value(value, param=param, ctx=ctx)

    def get_runtime_param(self: Any) -> Any:
        if getattr(self, "_runtime_param", None) is None:
            desc = self.type_descriptor
            if desc.file_annotation is None:
                convert = _converter(desc.annotation, desc.parameter_info)
                if convert is not None:
                    self._runtime_param = FastParam(
                        parameter_info=desc.parameter_info,
                        annotation=desc.annotation,
                        convert=convert,
                        descriptor=desc,
                    )
        return original(self)

    core._TyperParameter.get_runtime_param = get_runtime_param  # type: ignore[method-assign]
