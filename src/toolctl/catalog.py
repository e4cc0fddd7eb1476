"""Large catalogs: toolsets and deferred loading, as declared in ``toolctl.yaml`` and tool files.

A tool may say ``loading: eager | deferred`` and ``toolset: NAME``; ``toolctl.yaml`` declares the
toolsets (``toolsets: {NAME: {description: TEXT, loading: eager|deferred}}``). A tool's own
``loading`` overrides its toolset's; neither given means eager. The exporters compile this to each
provider's mechanism (Anthropic ``defer_loading`` + tool search, OpenAI namespaces +
``tool_search``, allowed-names lists) and ``toolctl serve --search`` to two MCP meta-tools.

This module is the one place that reads the ``toolsets`` setting and decides a tool's loading.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from toolctl.diagnostics import Diagnostic, error
from toolctl.errors import ConfigError

if TYPE_CHECKING:
    from toolctl.spec import ToolSpec

EAGER = "eager"
DEFERRED = "deferred"
LOADINGS = (EAGER, DEFERRED)
# Valid as an OpenAI namespace, a Gemini/Anthropic name prefix and an MCP name part alike.
TOOLSET_NAME = re.compile(r"[A-Za-z0-9_-]{1,64}")
# RFC 6749 scope-token: printable ASCII without space, '"' or '\\'
SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
_EXAMPLE = "toolsets: {billing: {description: Invoices and payments, loading: deferred}}"


@dataclass(frozen=True)
class Toolset:
    """One declared toolset: what the group is for (shown to models) and its default loading."""

    name: str
    description: str
    loading: str = EAGER
    scopes: tuple[str, ...] = ()  # OAuth scopes every tool of the set needs (besides its own)


Toolsets = Mapping[str, Toolset]


def parse_toolsets(settings: Mapping[str, Any], origin: Callable[[], str]) -> dict[str, Toolset]:
    """The ``toolsets`` setting as :class:`Toolset` objects by name, or a :class:`ConfigError`
    at ``origin()`` (worked out only for the error) saying what is wrong and how to fix it."""
    value = settings.get("toolsets")
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ConfigError(
            f"{origin()}: toolsets must be a mapping of toolset names, not {type(value).__name__}",
            hint=f"e.g. {_EXAMPLE}",
        )
    return {str(name): _toolset(name, body, origin) for name, body in value.items()}


def _toolset(name: Any, body: Any, origin: Callable[[], str]) -> Toolset:
    if not isinstance(name, str) or not TOOLSET_NAME.fullmatch(name):
        raise ConfigError(
            f"{origin()}: toolset name {name!r} is not 1-64 letters, digits, '_' or '-'",
            hint="providers use it as a namespace name; rename it, e.g. billing_v2",
        )
    if not isinstance(body, dict):
        raise ConfigError(
            f"{origin()}: toolsets.{name} must be a mapping with description and loading",
            hint=f"e.g. {_EXAMPLE}",
        )
    unknown = sorted(str(k) for k in body if k not in ("description", "loading", "scopes"))
    if unknown:
        raise ConfigError(
            f"{origin()}: toolsets.{name}: unknown key(s) {', '.join(unknown)}",
            hint="a toolset has only description, loading and scopes",
        )
    scopes = body.get("scopes", [])
    if not isinstance(scopes, list) or not all(
        isinstance(s, str) and SCOPE_TOKEN.fullmatch(s) for s in scopes
    ):
        raise ConfigError(
            f"{origin()}: toolsets.{name}.scopes must be a list of OAuth scope names",
            hint="e.g. scopes: [billing:read] (letters, digits and !#-[]-~ punctuation, no spaces)",
        )
    text = body.get("description")
    if not isinstance(text, str) or not text.strip():
        raise ConfigError(
            f"{origin()}: toolsets.{name} needs a description (non-empty text)",
            hint="models read it to decide whether to look inside the toolset "
            "(OpenAI shows it as the namespace description)",
        )
    loading = body.get("loading", EAGER)
    if loading not in LOADINGS:
        raise ConfigError(
            f"{origin()}: toolsets.{name}.loading must be eager or deferred, not {loading!r}",
            hint="deferred: the tools are found through tool search instead of sent up front",
        )
    return Toolset(name, text, loading, tuple(dict.fromkeys(scopes)))


def loading_of(spec: ToolSpec, toolsets: Toolsets) -> str:
    """``eager`` or ``deferred``: the tool's own ``loading``, else its toolset's, else eager."""
    if spec.loading is not None:
        return spec.loading
    if spec.toolset is not None:
        found = toolsets.get(spec.toolset)
        if found is not None:
            return found.loading
    return EAGER


def scopes_of(spec: ToolSpec, toolsets: Toolsets) -> tuple[str, ...]:
    """The OAuth scopes a caller needs to see and call the tool: its own ``scopes`` and its
    toolset's."""
    found = toolsets.get(spec.toolset) if spec.toolset is not None else None
    if found is None or not found.scopes:
        return spec.scopes
    return tuple(dict.fromkeys((*spec.scopes, *found.scopes)))


def is_deferred(spec: ToolSpec, toolsets: Toolsets) -> bool:
    """True when the tool is not sent to a model up front."""
    return loading_of(spec, toolsets) == DEFERRED


def unknown_toolsets(specs: Iterable[ToolSpec], toolsets: Toolsets) -> list[Diagnostic]:
    """An error (TC207) at the ``toolset:`` line of every tool naming an undeclared toolset."""
    out = []
    declared = sorted(toolsets)
    for spec in specs:
        if spec.toolset is None or spec.toolset in toolsets:
            continue
        import difflib  # only for a typo: every command reads this module

        near = difflib.get_close_matches(spec.toolset, declared, n=1)
        fix = f"did you mean {near[0]!r}? " if near else ""
        out.append(
            error(
                spec.locate("toolset"),
                "TC207",
                f"tool {spec.name!r} names toolset {spec.toolset!r}, which toolctl.yaml does not "
                "declare",
                hint=f"{fix}declare it under toolsets: in toolctl.yaml ({_EXAMPLE})",
                tool=spec.name,
            )
        )
    return out


def members(specs: Iterable[ToolSpec], names: Iterable[str]) -> list[ToolSpec]:
    """The tools of ``specs`` in any of the toolsets ``names`` (order kept)."""
    wanted = set(names)
    return [s for s in specs if s.toolset in wanted]
