"""Provider compatibility: would each tool export cleanly to each selected provider's format?

These rules ask the exporters themselves (:meth:`toolctl.export.base.Exporter.check` and the
request-level ``finish``), so ``lint`` and ``toolctl export`` can never disagree: each provider
rule (names, strict-mode subsets, keywords, limits) is defined once, in its exporter. Select
providers with ``--provider openai,anthropic`` or ``lint.providers``. Faithful rewrites (``$ref``
inlined, optional made nullable) are the exporter's business and are not reported.
"""

from __future__ import annotations

import dataclasses
import functools
import re
from collections.abc import Iterator, Sequence
from typing import Any

from toolctl.diagnostics import Diagnostic, Severity
from toolctl.lint.context import LintContext
from toolctl.lint.model import Hit, RuleSet
from toolctl.spec import ToolSpec

RULES = RuleSet("providers")

_TOOL = re.compile(r"^tool '[^']*': ")
_REASON = re.compile(r" \((?:[^()]|\([^()]*\))*\)$")  # "(OpenAI strict mode)": names one target
# Exporter findings another rule already reports, with a limit the user can configure:
# TX202 (description too long) is TL103 (``lint.description.max-length``).
_REPORTED_ELSEWHERE = frozenset({"TX202"})


@functools.cache
def _exporter(provider: str) -> Any:
    """The exporter for ``provider``, loaded once per process (entry points are slow to scan)."""
    from toolctl.export import get_exporter

    return get_exporter(provider)


@functools.cache
def _options() -> Any:
    """One frozen set of options for every check (building it per tool was measurable)."""
    from toolctl.export.base import ExportOptions

    return ExportOptions(infos=False)  # the rules report errors and warnings only


@functools.cache
def _checkers(providers: tuple[str, ...]) -> list[tuple[str, Any]]:
    """(provider, its exporter's ``check``) for each of ``providers``."""
    return [(p, _exporter(p).check) for p in providers]


def _checks(tool: ToolSpec, ctx: LintContext) -> list[tuple[str, Diagnostic]]:
    """(provider, finding) of exporting ``tool`` to each selected provider, once per tool."""

    def build(spec: ToolSpec) -> list[tuple[str, Diagnostic]]:
        options = _options()
        return [
            (p, d) for p, check in _checkers(ctx.config.providers) for d in check(spec, options)
        ]

    found: list[tuple[str, Diagnostic]] = ctx.scratch("export", tool, build)
    return found


def _plain(provider: str, message: str) -> str:
    """The exporter's message without what names its target (the hit names the providers)."""
    exporter = _exporter(provider)
    for label in (getattr(exporter, "label", ""), getattr(exporter, "name", "")):
        if label and message.startswith(f"{label}: "):
            message = message[len(label) + 2 :]
            break
    return _REASON.sub("", _TOOL.sub("", message))


def _grouped(
    found: Sequence[tuple[str, Diagnostic]], severity: Severity
) -> Iterator[tuple[Diagnostic, str, list[str]]]:
    """(first finding, message without the target, providers) for each distinct finding."""
    groups: dict[tuple[Any, ...], tuple[Diagnostic, str, list[str]]] = {}
    for provider, diag in found:
        if diag.severity is severity and diag.code not in _REPORTED_ELSEWHERE:
            text = _plain(provider, diag.message)
            key = (diag.code, diag.file, diag.line, diag.col, text)
            groups.setdefault(key, (diag, text, []))[2].append(provider)
    yield from groups.values()


def _hit(tool: ToolSpec, diag: Diagnostic, text: str, providers: list[str]) -> Hit:
    return Hit(
        tool,
        (),
        f"{', '.join(providers)}: {text} ({diag.code})",
        hint=diag.hint,
        loc=diag.location if diag.file else tool.location,
    )


@RULES.tool(
    "TL301",
    "export-refused",
    Severity.WARNING,
    "a selected provider's export refuses the tool (name, strict mode, limits)",
)
def export_refused(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """Exporting the tool to a selected provider fails: ``toolctl export`` would refuse it.

    The message is the exporter's own, with its ``TX`` code and the providers concerned: a name
    the provider rejects (OpenAI, Anthropic, Bedrock and Mistral accept
    ``^[a-zA-Z0-9_-]{1,64}$``), a schema strict mode cannot express, a limit exceeded, a
    ``providerOptions`` key that would override the declaration. A warning by default because
    not every registry ships to every provider: list yours in ``lint.providers`` and raise this
    rule to ``error``.
    """
    for diag, text, providers in _grouped(_checks(tool, ctx), Severity.ERROR):
        yield _hit(tool, diag, text, providers)


@RULES.tool(
    "TL302",
    "export-lossy",
    Severity.INFO,
    "a selected provider's export drops or loosens part of the declaration",
)
def export_lossy(tool: ToolSpec, ctx: LintContext) -> Iterator[Hit]:
    """Exporting the tool to a selected provider loses meaning: a keyword dropped (strict modes
    drop ``minLength``, ``maximum`` ...), ``oneOf`` loosened to ``anyOf``, an output schema left
    out.

    The runtime still validates the full schema, but the model is not held to the lost parts and
    may send arguments the tool then rejects. ``toolctl export --check`` makes these errors.
    """
    for diag, text, providers in _grouped(_checks(tool, ctx), Severity.WARNING):
        yield _hit(tool, diag, text, providers)


@RULES.registry(
    "TL303",
    "export-request-limits",
    Severity.WARNING,
    "more tools (or strict tools) than a provider accepts in one request",
)
def export_request_limits(tools: Sequence[ToolSpec], ctx: LintContext) -> Iterator[Hit]:
    """The enabled tools together break a provider's per-request limit.

    OpenAI accepts at most 128 tools per request; Anthropic at most 20 strict tools, and limits
    the optional and union-typed parameters summed over them. Export a subset per agent
    (``toolctl export --tag``), or turn tools off.
    """
    enabled = [t for t in tools if t.enabled]
    if not enabled:
        return
    by_name = {t.name: t for t in enabled}
    found: list[tuple[str, Diagnostic]] = []
    options = _options()
    if ctx.toolsets:  # deferred tools do not count against a request's tools where deferred
        options = dataclasses.replace(options, catalog=ctx.toolsets)
    for provider in ctx.config.providers:
        finish = getattr(_exporter(provider), "finish", None)
        if finish is not None:
            found += [(provider, d) for d in finish(enabled, options)]
    for severity in (Severity.ERROR, Severity.WARNING):
        for diag, text, providers in _grouped(found, severity):
            yield _hit(by_name.get(diag.tool or "", enabled[0]), diag, text, providers)
