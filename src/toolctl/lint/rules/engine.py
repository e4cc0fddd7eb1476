"""The engine's own findings, catalogued like rules so they can be configured and explained."""

from __future__ import annotations

from collections.abc import Iterator

from toolctl.diagnostics import Severity
from toolctl.lint.context import LintContext
from toolctl.lint.model import Hit, RuleSet
from toolctl.spec import ToolSpec

RULES = RuleSet("engine")


@RULES.tool("TL000", "plugin-failed", Severity.ERROR, "a lint rule pack failed to load")
def plugin_failed(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A ``toolctl.lint_rules`` entry point failed to import, or declared a bad or duplicate rule.

    The message names the entry point and the problem; its rules did not run, the others did.
    Fix or uninstall the rule pack.
    """
    return iter(())


@RULES.tool("TL001", "rule-crashed", Severity.ERROR, "a lint rule raised an exception")
def rule_crashed(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A lint rule raised an exception on a tool, so that tool was not fully checked.

    The message names the rule and the exception. For a built-in rule this is a toolctl bug;
    for a plugin rule, report it to the plugin's authors. Other rules still ran.
    """
    return iter(())


@RULES.tool(
    "TL002", "unused-ignore", Severity.INFO, "`# toolctl: ignore[...]` that suppresses nothing"
)
def unused_ignore(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """An inline ``# toolctl: ignore[CODE]`` comment suppressed no finding.

    A stale ignore hides nothing today and will hide a real finding tomorrow: remove it. Comments
    that name rules which did not run (not selected) are not reported. The engine reports this
    after suppression, so the function itself finds nothing.
    """
    return iter(())


@RULES.tool(
    "TL003", "unknown-ignore", Severity.WARNING, "`# toolctl: ignore[...]` naming no known rule"
)
def unknown_ignore(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """An inline ``# toolctl: ignore[...]`` names a code, rule or family that does not exist.

    ``ignore[TL999]`` or ``ignore[secuirty]`` suppresses nothing, now or after the finding it was
    meant for appears: fix the name (the message suggests the closest one) or remove the comment.
    Codes of a rule pack that is not installed are unknown too. A misspelt directive
    (``# toolctl: ingore[...]``) and an ignore without its bracketed codes
    (``# toolctl: ignore TL101``) are reported the same way. The engine reports this while reading
    the comments, so the function itself finds nothing.
    """
    return iter(())
