"""Descriptions: what the model reads to decide whether and how to call a tool."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from toolctl.diagnostics import Severity
from toolctl.lint.context import LintContext
from toolctl.lint.model import Hit, RuleSet
from toolctl.spec import ToolSpec

RULES = RuleSet("descriptions")

_PLACEHOLDER = re.compile(
    r"^\W*(todo|tbd|fixme|xxx|description|placeholder|n/?a|\.+|-+)\W*$", re.IGNORECASE
)
_PUNCTUATION = re.compile(r"[\W_]+")


# For ASCII text, [\W_] is everything but letters and digits: bytes.translate deletes them in C.
_NOT_ALNUM = bytes(c for c in range(128) if not chr(c).isalnum())


def _plain(text: str) -> str:
    """``text`` without punctuation, spaces or ``_``, lower-cased."""
    if text.isascii():
        return text.encode("ascii").translate(None, _NOT_ALNUM).decode("ascii").lower()
    return _PUNCTUATION.sub("", text).lower()


@RULES.tool(
    "TL101",
    "description-placeholder",
    Severity.WARNING,
    "description is a placeholder (TODO, TBD, the tool's own name)",
)
def description_placeholder(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """The description is a placeholder: ``TODO``, ``TBD``, ``...`` or just the tool's name.

    The description is the only thing a model reads to decide when to call a tool. A placeholder
    means the model guesses. Write what the tool does, when to use it and what it returns.
    """
    text = tool.description.strip()
    if _PLACEHOLDER.match(text) or _plain(text) == _plain(tool.name):
        yield Hit(
            tool,
            ("description",),
            f"description {text!r} is a placeholder",
            hint="say what the tool does, when to use it and what it returns",
        )


@RULES.tool(
    "TL102",
    "description-too-short",
    Severity.WARNING,
    "description is too short to tell a model when to use the tool",
)
def description_too_short(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """The description is shorter than ``description.min-length`` characters (default 20).

    One or two words rarely tell a model when a tool applies, what it returns, or how it differs
    from its neighbours. Placeholders are reported by TL101 instead.
    """
    text = tool.description.strip()
    if len(text) < ctx.config.description_min and not _PLACEHOLDER.match(text):
        yield Hit(
            tool,
            ("description",),
            f"description is {len(text)} characters (minimum {ctx.config.description_min})",
            hint="describe what the tool does, when to use it and what it returns",
        )


@RULES.tool(
    "TL103",
    "description-too-long",
    Severity.WARNING,
    "description is longer than providers accept (OpenAI: 1024 characters)",
)
def description_too_long(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """The description is longer than ``description.max-length`` characters (default 1024).

    OpenAI rejects tool descriptions over 1024 characters (``string_above_max_length``), and every
    character is paid for in each request. Move details into parameter descriptions or examples.
    """
    length = len(tool.description)
    if length > ctx.config.description_max:
        yield Hit(
            tool,
            ("description",),
            f"description is {length} characters (limit {ctx.config.description_max})",
            hint="shorten it; move details into parameter descriptions",
        )


def _documented(prop: Any, root: Any) -> bool:
    if not isinstance(prop, dict):
        return True  # boolean schemas carry no text
    if prop.get("description") or prop.get("title"):
        return True
    ref = prop.get("$ref")
    if isinstance(ref, str) and ref.startswith("#/"):
        node = root
        for part in ref[2:].split("/"):
            node = node.get(part) if isinstance(node, dict) else None
        return isinstance(node, dict) and bool(node.get("description") or node.get("title"))
    return False


def _params(tool: ToolSpec, ctx: LintContext, required: bool) -> Iterator[Hit]:
    root = tool.input_schema
    for key, path, node in ctx.having(tool, "properties"):
        props = node.get("properties")
        if key != "inputSchema" or not isinstance(props, dict):
            continue
        req = node["required"] if isinstance(node.get("required"), list) else []
        for name, prop in props.items():
            if (name in req) == required and not _documented(prop, root):
                kind = "required parameter" if required else "parameter"
                yield Hit(
                    tool,
                    (*path, "properties", name),
                    f"{kind} {name!r} has no description",
                    hint="add a description: what it means, its unit and format",
                    key=True,
                )


@RULES.tool(
    "TL104", "parameter-undocumented", Severity.INFO, "optional parameter has no description"
)
def parameter_undocumented(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """An optional input parameter has no ``description`` (or ``title``).

    Models fill parameters from their names and descriptions. Without a description the model
    guesses the meaning, unit and format, or leaves the parameter out.
    """
    yield from _params(tool, ctx, required=False)


@RULES.tool(
    "TL105",
    "required-parameter-undocumented",
    Severity.WARNING,
    "required parameter has no description",
)
def required_parameter_undocumented(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A required input parameter has no ``description`` (or ``title``).

    The model must supply a required parameter on every call; without a description it guesses
    what to put there, and the call fails validation or does the wrong thing.
    """
    yield from _params(tool, ctx, required=True)
