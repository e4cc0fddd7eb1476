"""Size: how many tokens each tool definition costs in every request, against a budget.

The estimate is the exported definition (name, description, input schema) as compact JSON, at
four characters per token: the usual rule of thumb for English and JSON with current tokenizers.
It is an estimate for budgeting, not a bill.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Sequence

from toolctl.diagnostics import Severity
from toolctl.lint.context import LintContext
from toolctl.lint.model import Hit, RuleSet
from toolctl.spec import ToolSpec

RULES = RuleSet("size")
CHARS_PER_TOKEN = 4
# What json.dumps(separators=(",", ":"), ensure_ascii=False) builds on every call, built once.
_COMPACT = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def estimate_tokens(tool: ToolSpec) -> int:
    """Estimated tokens of ``tool``'s definition as a model receives it."""
    data = {"name": tool.name, "description": tool.description, "parameters": tool.input_schema}
    text = _COMPACT.encode(data)
    return -(-len(text) // CHARS_PER_TOKEN)


def _tokens(tool: ToolSpec, ctx: LintContext) -> int:
    count: int = ctx.memo("tokens", tool, estimate_tokens)
    return count


@RULES.tool(
    "TL701",
    "tool-token-budget",
    Severity.WARNING,
    "tool definition larger than the per-tool token budget",
)
def tool_token_budget(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """The tool's definition is estimated above ``budget.tool`` tokens (default 1500).

    Every tool definition is sent with every request: large ones cost money and context, and
    crowd out the conversation. Shorten descriptions, drop unused parameters, or load the tool
    lazily (``defer_loading``).
    """
    tokens = _tokens(tool, ctx)
    if tokens > ctx.config.tool_budget:
        yield Hit(
            tool,
            ("name",),
            f"definition is about {tokens} tokens (budget {ctx.config.tool_budget})",
            hint="shorten descriptions and schemas, or raise lint.budget.tool",
        )


@RULES.registry(
    "TL702",
    "registry-token-budget",
    Severity.WARNING,
    "all enabled tools together exceed the registry token budget",
)
def registry_token_budget(tools: Sequence[ToolSpec], ctx: LintContext) -> Iterator[Hit]:
    """All enabled tools together are estimated above ``budget.registry`` tokens (default 30000).

    A client that loads the whole registry pays this on every request. Split tools into tagged
    sets per agent, or defer rarely used ones. The finding points at the largest tool.
    """
    sizes = sorted(
        ((_tokens(t, ctx), t) for t in tools if t.enabled),
        key=lambda pair: (-pair[0], pair[1].name),
    )
    total = sum(n for n, _ in sizes)
    if sizes and total > ctx.config.registry_budget:
        biggest = ", ".join(f"{t.name} ({n})" for n, t in sizes[:3])
        yield Hit(
            sizes[0][1],
            ("name",),
            f"enabled tools total about {total} tokens (budget "
            f"{ctx.config.registry_budget}); largest: {biggest}",
            hint="export tagged subsets, or raise lint.budget.registry",
        )
