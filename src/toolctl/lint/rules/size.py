"""Size: how many tokens each tool definition costs in every request, against a budget.

The estimate is the exported definition (name, description, input schema) as compact JSON, at
four characters per token: the usual rule of thumb for English and JSON with current tokenizers.
It is an estimate for budgeting, not a bill.
"""

from __future__ import annotations

import json
import re
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
    """All enabled tools a model gets up front are estimated above ``budget.registry`` tokens
    (default 30000).

    A client that loads the whole registry pays this on every request. Split tools into tagged
    sets per agent, or defer rarely used ones (``loading: deferred``: those are not counted).
    The finding points at the largest tool.
    """
    from toolctl.catalog import is_deferred

    sizes = sorted(
        ((_tokens(t, ctx), t) for t in tools if t.enabled and not is_deferred(t, ctx.toolsets)),
        key=lambda pair: (-pair[0], pair[1].name),
    )
    total = sum(n for n, _ in sizes)
    if sizes and total > ctx.config.registry_budget:
        biggest = ", ".join(f"{t.name} ({n})" for n, t in sizes[:3])
        yield Hit(
            sizes[0][1],
            ("name",),
            f"enabled tools sent up front total about {total} tokens (budget "
            f"{ctx.config.registry_budget}); largest: {biggest}",
            hint="export tagged subsets, or raise lint.budget.registry",
        )


MAX_TOOLSET = 10  # OpenAI recommends fewer than about ten functions per namespace
# Groups larger than this are compared by their normalized forms only: pairwise similarity
# over thousands of tools would cost seconds on the lint path.
MAX_PAIRWISE = 200
SIMILAR = 0.8  # word-set Jaccard of two descriptions above which a model cannot tell them apart
_STOP = frozenset(
    {"a", "an", "and", "the", "of", "to", "for", "in", "on", "by", "with", "from", "or", "is"}
    | {"are", "be", "this", "that", "it"}
)


@RULES.registry(
    "TL703",
    "toolset-size",
    Severity.WARNING,
    "a toolset (an OpenAI namespace) with more than about ten tools",
)
def toolset_size(tools: Sequence[ToolSpec], ctx: LintContext) -> Iterator[Hit]:
    """A toolset holds more than 10 enabled tools.

    Providers choose worse among many similar tools; OpenAI recommends fewer than about ten
    functions per namespace. Split the toolset by task. The finding points at the first tool.
    """
    groups: dict[str, list[ToolSpec]] = {}
    for tool in tools:
        if tool.enabled and tool.toolset is not None:
            groups.setdefault(tool.toolset, []).append(tool)
    for name, members in sorted(groups.items()):
        if len(members) > MAX_TOOLSET:
            yield Hit(
                members[0],
                ("toolset",),
                f"toolset {name!r} has {len(members)} tools (more than {MAX_TOOLSET})",
                hint="split it into smaller toolsets by task",
            )


_NAME_WORD = re.compile(r"[A-Za-z][a-z]*[0-9]*|[0-9]+")
_VERSION = re.compile(r"v?[0-9]+")
_TEXT_WORD = re.compile(r"[a-z0-9]+")


def _name_key(name: str) -> str:
    """A name reduced to its words, without version suffixes: get_current_weather_v2,
    getCurrentWeather and get-current-weather all give the same key."""
    words = (w.lower() for w in _NAME_WORD.findall(name))
    return " ".join(w for w in words if not _VERSION.fullmatch(w))


def _words(text: str) -> frozenset[str]:
    return frozenset(_TEXT_WORD.findall(text.lower())) - _STOP


def _jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def _alike_pairs(group: Sequence[ToolSpec]) -> Iterator[tuple[ToolSpec, ToolSpec, str]]:
    """Pairs of ``group`` (in name order) too alike to tell apart, and why."""
    seen_names: dict[str, ToolSpec] = {}
    seen_texts: dict[frozenset[str], ToolSpec] = {}
    texts = []
    for tool in group:
        key = _name_key(tool.name)
        if key and key in seen_names:
            yield seen_names[key], tool, "names differ only in case, separators or a version"
        seen_names.setdefault(key, tool)
        words = _words(tool.description)
        texts.append((tool, words))
        if words and words in seen_texts:
            yield seen_texts[words], tool, "descriptions use the same words"
        seen_texts.setdefault(words, tool)
    if len(group) > MAX_PAIRWISE:
        return
    for i, (a, wa) in enumerate(texts):
        for b, wb in texts[i + 1 :]:
            if wa != wb and _jaccard(wa, wb) >= SIMILAR:
                yield a, b, "descriptions share most of their words"


@RULES.registry(
    "TL704",
    "indistinct-tools",
    Severity.WARNING,
    "tools whose names or descriptions are too alike for a model to tell apart",
)
def indistinct_tools(tools: Sequence[ToolSpec], ctx: LintContext) -> Iterator[Hit]:
    """Two enabled tools (in the same toolset, or both in none) have names that differ only
    in case, separators or a version suffix, or descriptions made of (nearly) the same words.

    A model picks between tools by their names and descriptions; when those say the same, it
    guesses, and a search over the catalog cannot rank one above the other. Say in each
    description what sets the tool apart, or merge the tools. Compared within a toolset (a
    group of more than 200 tools by exact word sets only, to keep lint fast).
    """
    groups: dict[str | None, list[ToolSpec]] = {}
    for tool in tools:
        if tool.enabled:
            groups.setdefault(tool.toolset, []).append(tool)
    for _, members in sorted(groups.items(), key=lambda kv: kv[0] or ""):
        members.sort(key=lambda t: t.name)
        pairs: dict[tuple[str, str], tuple[ToolSpec, ToolSpec, list[str]]] = {}
        for first, second, why in _alike_pairs(members):
            pair = pairs.setdefault((first.name, second.name), (first, second, []))
            pair[2].append(why)
        for first, second, reasons in pairs.values():
            yield Hit(
                second,
                ("description",),
                f"{second.name!r} and {first.name!r} are hard to tell apart: {'; '.join(reasons)}",
                hint="say in each description what sets the tool apart, or merge them",
            )
