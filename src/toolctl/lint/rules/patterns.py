"""Schemas, continued: patterns and keywords that make validation slow or unportable.

Same family as :mod:`toolctl.lint.rules.schemas` (``schemas``); a separate module only to keep
each file small.
"""

from __future__ import annotations

from collections.abc import Iterator

from toolctl.diagnostics import Severity
from toolctl.lint.context import LintContext
from toolctl.lint.model import Hit, RuleSet
from toolctl.lint.regexcheck import backtracking_verdict, non_portable
from toolctl.lint.walk import schema_types
from toolctl.spec import ToolSpec
from toolctl.yamlsrc import JsonPath

RULES = RuleSet("schemas")

INBOUND = ("inputSchema", "resumeSchema", "requestContextSchema")
"""Schemas that validate data from outside (the model, a resuming client, the caller)."""
UNIQUE_ITEMS_MAX = 200
"""Largest maxItems for which uniqueItems over objects stays cheap (quadratic comparison)."""


@RULES.tool(
    "TL203",
    "pattern-backtracking",
    Severity.WARNING,
    "`pattern` with a catastrophic-backtracking shape such as `(a+)+`",
)
def pattern_backtracking(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A ``pattern`` has a shape that backtracking regex engines take exponential time on.

    ``(a+)+``, ``(\\w+\\s?)*`` and ``(a|a)+`` are the classic forms: a short non-matching input
    takes seconds or hours. toolctl bounds its own evaluation with a time limit, but the same
    schema in a client, a provider or another validator may hang. Rewrite the pattern so each
    character can be matched in only one way (``[a-z]+(-[a-z]+)*``).

    A pattern too large or too deeply nested to analyse within the budget (50,000 atoms, groups
    nested 50 deep) is reported as such: split or simplify it.
    """
    for path, pattern in _patterns(tool, ctx):
        problem, too_complex = backtracking_verdict(pattern)
        if too_complex is not None:
            yield Hit(
                tool,
                path,
                f"pattern is too complex to analyse for backtracking ({too_complex})",
                hint="simplify the pattern, or check the value in the handler instead",
            )
        elif problem:
            yield Hit(
                tool,
                path,
                f"pattern {pattern!r} can backtrack catastrophically: {problem}",
                hint="make each character matchable in only one way, e.g. [a-z]+(-[a-z]+)*",
            )


@RULES.tool(
    "TL204",
    "pattern-not-portable",
    Severity.WARNING,
    "`pattern` uses lookaround, backreferences or flags that many validators reject",
)
def pattern_not_portable(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A ``pattern`` uses syntax outside the portable ECMA-262/RE2 subset.

    Lookahead, lookbehind, backreferences, atomic groups, possessive quantifiers, inline flags and
    ``\\A``/``\\Z`` are rejected by RE2-based validators (Go, many gateways) or mean something
    else in JavaScript. Express the constraint with plain classes, groups and quantifiers.
    """
    for path, pattern in _patterns(tool, ctx):
        what = non_portable(pattern)
        if what:
            yield Hit(
                tool,
                path,
                f"pattern {pattern!r} uses {what}, which RE2 and ECMA engines do not all support",
                hint="use only classes, groups, | and quantifiers",
            )


def _patterns(tool: ToolSpec, ctx: LintContext) -> list[tuple[JsonPath, str]]:
    """(path, pattern) of every ``pattern`` and ``patternProperties`` key (once per tool)."""

    def build(spec: ToolSpec) -> list[tuple[JsonPath, str]]:
        found: list[tuple[JsonPath, str]] = []
        for _key, path, node in ctx.subschemas(spec):
            if isinstance(node.get("pattern"), str):
                found.append(((*path, "pattern"), node["pattern"]))
            props = node.get("patternProperties")
            if isinstance(props, dict):
                found += [((*path, "patternProperties", p), p) for p in props]
        return found

    patterns: list[tuple[JsonPath, str]] = ctx.scratch("patterns", tool, build)
    return patterns


@RULES.tool(
    "TL205",
    "pattern-without-max-length",
    Severity.WARNING,
    "string with `pattern` but no `maxLength`",
)
def pattern_without_max_length(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A string schema has a ``pattern`` but no ``maxLength``.

    Regex cost grows with the input; without a length cap a model (or an attacker behind it) can
    send a megabyte string into the pattern. Add a ``maxLength`` that fits the data. Checked in
    the schemas that take data from outside (input, resume, request context).
    """
    for key, path, node in ctx.having(tool, "pattern"):
        if key not in INBOUND:
            continue
        types = schema_types(node)
        if "pattern" in node and "maxLength" not in node and (not types or "string" in types):
            yield Hit(
                tool,
                (*path, "pattern"),
                "pattern without maxLength: input length is unbounded",
                hint="add maxLength (e.g. maxLength: 256)",
                key=True,
            )


@RULES.tool(
    "TL206",
    "unique-items-unbounded",
    Severity.WARNING,
    "`uniqueItems` over objects or arrays without a small `maxItems`",
)
def unique_items_unbounded(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """``uniqueItems: true`` on an array of objects or arrays without ``maxItems`` <= 200.

    Checking uniqueness of objects is quadratic: 10,000 objects take about 90 seconds to validate.
    Cap the array with ``maxItems`` or drop ``uniqueItems`` and deduplicate in the handler.
    """
    for _key, path, node in ctx.having(tool, "uniqueItems"):
        if node.get("uniqueItems") is not True:
            continue
        items = node.get("items")
        kinds = schema_types(items) if isinstance(items, dict) else set()
        cheap = kinds and kinds <= {"string", "number", "integer", "boolean", "null"}
        limit = node.get("maxItems")
        if not cheap and not (isinstance(limit, int) and limit <= UNIQUE_ITEMS_MAX):
            yield Hit(
                tool,
                (*path, "uniqueItems"),
                "uniqueItems over objects is quadratic and the array has no small maxItems",
                hint=f"add maxItems (at most {UNIQUE_ITEMS_MAX})",
                key=True,
            )
