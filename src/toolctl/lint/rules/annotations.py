"""Annotations and policy: MCP behaviour hints that agree with each other and with the tool."""

from __future__ import annotations

import re
from collections.abc import Iterator

from toolctl.catalog import scopes_of
from toolctl.diagnostics import Severity
from toolctl.lint.context import LintContext
from toolctl.lint.model import Hit, RuleSet
from toolctl.spec import ToolSpec

RULES = RuleSet("annotations")
_ANN = ("mcp", "annotations")
_NETWORK_NAMES = re.compile(
    r"(^|_)(url|uri|endpoint|webhook|host|hostname|domain)s?($|_)", re.IGNORECASE
)


@RULES.tool(
    "TL401",
    "read-only-destructive",
    Severity.ERROR,
    "`readOnlyHint: true` together with `destructiveHint: true`",
)
def read_only_destructive(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """``readOnlyHint: true`` and ``destructiveHint: true`` contradict each other.

    A read-only tool changes nothing, so it cannot destroy anything; clients that auto-approve
    read-only tools would auto-approve a destructive one. Decide which is true.
    """
    ann = tool.annotations
    if ann.get("readOnlyHint") is True and ann.get("destructiveHint") is True:
        yield Hit(
            tool,
            (*_ANN, "destructiveHint"),
            "readOnlyHint and destructiveHint are both true",
            hint="a read-only tool is not destructive: remove one of them",
        )


@RULES.tool(
    "TL402",
    "destructive-without-approval",
    Severity.WARNING,
    "destructive tool that does not require approval",
)
def destructive_without_approval(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """``destructiveHint: true`` but no ``requireApproval: true``.

    A destructive tool (deletes, overwrites, sends, pays) should pause for a human before it runs.
    Set ``requireApproval: true``, or ``destructiveHint: false`` if it is not destructive.
    """
    if tool.annotations.get("destructiveHint") is True and not tool.require_approval:
        yield Hit(
            tool,
            (*_ANN, "destructiveHint"),
            "destructive tool runs without approval",
            hint="add requireApproval: true",
        )


@RULES.tool(
    "TL406",
    "destructive-conditional-approval",
    Severity.WARNING,
    "destructive tool whose approval is conditional (`requireApproval: {when: ...}`)",
)
def destructive_conditional_approval(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """``destructiveHint: true`` and ``requireApproval: {when: ...}``: some calls run unapproved.

    Every call the ``when`` schema does not match runs without a human's approval. That may be
    what you mean (small amounts, callers with an admin scope), but a condition that is too
    narrow lets destructive calls through unseen; review it, or set ``requireApproval: true``.
    """
    if tool.annotations.get("destructiveHint") is True and tool.approval_when is not None:
        yield Hit(
            tool,
            ("requireApproval", "when"),
            "destructive tool runs without approval whenever requireApproval.when does not match",
            hint="check that the condition covers every dangerous call, "
            "or set requireApproval: true",
        )


@RULES.tool(
    "TL403",
    "annotations-missing",
    Severity.WARNING,
    "missing readOnlyHint, destructiveHint or title (directories require them)",
)
def annotations_missing(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """The tool lacks ``readOnlyHint``, ``destructiveHint`` (when not read-only) or a title.

    MCP directories (Anthropic's among them) require these, and clients use them to decide what
    to auto-approve. Without them MCP's defaults apply: not read-only, destructive, open world.
    """
    ann = tool.annotations
    missing = [k for k in ("readOnlyHint",) if k not in ann]
    if ann.get("readOnlyHint") is not True and "destructiveHint" not in ann:
        missing.append("destructiveHint")
    if not tool.title:
        missing.append("title")
    if missing:
        yield Hit(
            tool,
            _ANN if "mcp" in tool.raw else ("name",),
            f"missing {', '.join(missing)}",
            hint="add title and mcp.annotations {readOnlyHint, destructiveHint}",
        )


@RULES.tool(
    "TL404", "idempotent-background", Severity.INFO, "`idempotentHint` on a background tool"
)
def idempotent_background(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """``idempotentHint`` is set on a ``background`` tool.

    A background call returns before the work is done, and clients may retry it; whether a retry
    repeats the work is what matters, and the hint describes only the call. Check the claim.
    Read-only tools are exempt: repeating them changes nothing.
    """
    ann = tool.annotations
    if tool.background and "idempotentHint" in ann and ann.get("readOnlyHint") is not True:
        yield Hit(
            tool,
            (*_ANN, "idempotentHint"),
            "idempotentHint on a background tool",
            hint="make sure a retried background run does not repeat its side effects",
        )


@RULES.tool(
    "TL405",
    "closed-world-network",
    Severity.WARNING,
    "`openWorldHint: false` on a tool that takes URLs or hosts",
)
def closed_world_network(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """``openWorldHint: false`` but the tool takes a URL, URI or host parameter.

    A tool that reaches arbitrary network locations interacts with an open world; clients use the
    hint to warn users about data leaving the machine. Set ``openWorldHint: true``.
    """
    if tool.annotations.get("openWorldHint") is not False:
        return
    for key, _path, node in ctx.having(tool, "properties"):
        props = node.get("properties")
        if key != "inputSchema" or not isinstance(props, dict):
            continue
        for name, prop in props.items():
            fmt = prop.get("format", "") if isinstance(prop, dict) else ""
            if _NETWORK_NAMES.search(name) or fmt in ("uri", "url", "iri", "hostname"):
                yield Hit(
                    tool,
                    (*_ANN, "openWorldHint"),
                    f"openWorldHint is false but parameter {name!r} names a network location",
                    hint="set openWorldHint: true",
                )
                return


@RULES.tool(
    "TL410",
    "destructive-unscoped",
    Severity.WARNING,
    "destructive tool without `scopes` in a registry that uses scopes",
    peers=True,
)
def destructive_unscoped(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """A destructive tool declares no ``scopes`` while other tools of the registry do.

    With ``serve`` behind OAuth (``auth:``), a tool without scopes is listed to and callable by
    every token the server accepts, so the registry guards lesser tools than this one. Give it
    the scopes of the users who may run it (``scopes: [files:write]``), or ``destructiveHint:
    false`` if it is not destructive.
    """
    if tool.annotations.get("destructiveHint") is not True or scopes_of(tool, ctx.toolsets):
        return  # (a toolset's scopes bind its tools as their own do)
    scoped = ctx.memo(
        "scoped-tools", tool, lambda _: any(scopes_of(t, ctx.toolsets) for t in ctx.tools)
    )
    if scoped:
        yield Hit(
            tool,
            (*_ANN, "destructiveHint"),
            "destructive tool callable by every accepted token (no scopes)",
            hint="add scopes: [SCOPE] naming who may run it",
        )
