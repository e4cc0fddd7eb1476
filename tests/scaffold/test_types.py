"""Annotations as JSON Schema, case by case (the corpus covers them end to end)."""

from __future__ import annotations

import typing
from typing import Annotated, Any, NewType, Optional, Union

import annotated_types as at
import pytest
from pydantic import BaseModel, Field

from toolctl.scaffold import describe_function
from toolctl.scaffold.types import SchemaBuilder

UserId = NewType("UserId", int)


class Aliased(BaseModel):
    user_name: str = Field(alias="userName", description="Login name.")


@pytest.mark.parametrize(
    ("annotation", "schema"),
    [
        (Any, {}),
        (UserId, {"type": "integer"}),
        (Union[str, int], {"type": ["string", "integer"]}),  # noqa: UP007
        (
            Union[str, list[int]],  # noqa: UP007
            {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "integer"}}]},
        ),
        (
            Annotated[str, at.MinLen(2), at.MaxLen(8)],
            {"type": "string", "minLength": 2, "maxLength": 8},
        ),
        (
            Annotated[float, at.Gt(0), at.Lt(1)],
            {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
        ),
        (
            Annotated[int, Field(multiple_of=5, examples=[10])],
            {"type": "integer", "multipleOf": 5, "examples": [10]},
        ),
        (typing.Literal[1, "a"], {"enum": [1, "a"]}),
        (dict, {"type": "object"}),
        (dict[str, Any], {"type": "object"}),
        (tuple[()], {"type": "array", "maxItems": 0}),
        (
            Aliased,
            {
                "type": "object",
                "properties": {"userName": {"description": "Login name.", "type": "string"}},
                "required": ["userName"],
                "additionalProperties": False,
            },
        ),
    ],
)
def test_schema(annotation: Any, schema: dict[str, Any]) -> None:
    builder = SchemaBuilder()
    assert builder.build(annotation, "x") == schema
    assert builder.gaps == []


@pytest.mark.parametrize(
    ("annotation", "message"),
    [
        (bytes, "type bytes has no JSON Schema equivalent"),
        (dict[int, str], "dict keys of type int: JSON object keys are strings"),
        (typing.Callable[[], None], "has no JSON Schema equivalent"),
    ],
)
def test_gap(annotation: Any, message: str) -> None:
    builder = SchemaBuilder()
    assert builder.build(annotation, "x") == {}
    assert message in str(builder.gaps[0])


def test_optional_without_a_default_is_required_and_nullable() -> None:
    def f(limit: Optional[int], tag: str | None = None) -> None:  # noqa: UP045
        """Do it.

        Args:
            limit: At most this many; null for no limit.
        """

    schema = describe_function(f).input_schema
    assert schema["required"] == ["limit"]
    assert schema["properties"]["limit"] == {
        "description": "At most this many; null for no limit.",
        "type": ["integer", "null"],
    }
    assert schema["properties"]["tag"] == {"type": "string"}


def test_unresolvable_forward_reference_is_a_gap() -> None:
    def f(x: NotDefinedAnywhere) -> int:  # type: ignore[name-defined]  # noqa: F821
        """Do it."""
        return 1

    draft = describe_function(f)
    assert any("cannot resolve the type hints" in str(g) for g in draft.gaps)


def test_adapter_and_draft_agree_on_wrapping_when_hints_do_not_resolve() -> None:
    from toolctl.scaffold.adapter import from_function

    def f(x: int) -> NotDefinedEither:  # type: ignore[name-defined]  # noqa: F821
        """Do it."""
        return {"x": x}

    draft = describe_function(f)
    assert draft.wraps_result is True
    assert from_function(f)({"x": 1}) == {"result": {"x": 1}}


def test_rest_markup_becomes_markdown() -> None:
    def f(unit: str) -> None:
        """Convert with :func:`~units.convert` and :class:`Unit`.

        :param unit: A ``Unit`` value.
        """

    draft = describe_function(f)
    assert draft.description == "Convert with `convert` and `Unit`."
    assert draft.input_schema["properties"]["unit"]["description"] == "A `Unit` value."
