"""What a model sees up front: the size of the tool definitions sent with every request.

``toolctl export --budget`` reports it per provider and fails over ``export.budget`` in
toolctl.yaml. Up front means: every entry of the export except the deferred tools (Anthropic
``defer_loading``, OpenAI Responses ``defer_loading`` inside or outside a namespace), so the
tool search tool and namespace names and descriptions count; providers without deferred loading
send everything. ``mcp-search`` is the ``tools/list`` of ``toolctl serve --search`` (the eager
tools plus ``search_tools`` and ``call_tool``).

Sizes are compact JSON bytes (UTF-8); tokens are estimated at four bytes a token, the rule of
thumb the lint size rules use too: an estimate for budgeting, not a bill.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from toolctl.errors import ExportError

CHARS_PER_TOKEN = 4
MCP_SEARCH = "mcp-search"  # the serve --search listing, measured next to the export formats
# What `toolctl export --budget` measures when no provider is named: the built-in formats.
DEFAULT_FORMATS = (
    "anthropic",
    "openai-responses",
    "openai",
    "gemini",
    "bedrock",
    "mistral",
    "mcp",
    MCP_SEARCH,
)


@dataclass(frozen=True)
class UpFront:
    """The definition size of one export: up front and in full."""

    format: str
    bytes: int  # what the model gets with every request
    full_bytes: int  # every definition of the export
    tools: int  # tools sent up front (with their definitions)
    total: int  # tools in the export

    @property
    def tokens(self) -> int:
        """Estimated tokens of the up-front definitions."""
        return estimate_tokens(self.bytes)

    @property
    def share(self) -> float:
        """Up-front bytes as a fraction of the full export's."""
        return self.bytes / self.full_bytes if self.full_bytes else 0.0

    def as_dict(self) -> dict[str, Any]:
        """The JSON form (``toolctl export --budget -f json``)."""
        return {
            "format": self.format,
            "bytes": self.bytes,
            "tokens": self.tokens,
            "fullBytes": self.full_bytes,
            "share": round(self.share, 4),
            "tools": self.tools,
            "totalTools": self.total,
        }


def estimate_tokens(size: int) -> int:
    """Estimated tokens of ``size`` bytes of definitions (rounded up)."""
    return -(-size // CHARS_PER_TOKEN)


def size_of(data: Any) -> int:
    """Compact JSON bytes of ``data``."""
    return len(json.dumps(data, separators=(",", ":"), ensure_ascii=False).encode("utf-8"))


def _deferred(entry: Any) -> bool:
    return isinstance(entry, dict) and entry.get("defer_loading") is True


def _up_front_entries(entries: Sequence[Any]) -> list[Any]:
    """``entries`` without deferred ones; a namespace keeps its name, description and eager
    tools (the model reads the namespace to decide whether to search it)."""
    kept = []
    for entry in entries:
        if _deferred(entry):
            continue
        if isinstance(entry, dict) and entry.get("type") == "namespace":
            entry = {**entry, "tools": [t for t in entry.get("tools", ()) if not _deferred(t)]}
        kept.append(entry)
    return kept


def up_front(data: Any) -> Any:
    """The part of an export's ``data`` a model gets with every request."""
    if isinstance(data, Mapping) and isinstance(data.get("tools"), list):
        return {**data, "tools": _up_front_entries(data["tools"])}
    return data


DEFERRING = frozenset({"anthropic", "openai-responses", MCP_SEARCH})  # formats that defer


def measure(
    tools: Any,
    fmt: str,
    *,
    names: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    toolsets: Sequence[str] | None = None,
    **options: Any,
) -> UpFront:
    """Export ``tools`` (a registry or specs) as ``fmt`` (or :data:`MCP_SEARCH`), selected as
    :func:`toolctl.export.export_result` selects, and measure it; :class:`ExportError` when the
    export is refused."""
    from toolctl.catalog import is_deferred
    from toolctl.export import export_result, select
    from toolctl.export.mcpsearch import search_listing

    search = fmt == MCP_SEARCH
    options.setdefault("catalog", getattr(tools, "toolsets", {}))
    result = export_result(
        tools, "mcp" if search else fmt, names=names, tags=tags, toolsets=toolsets, **options
    )
    if not result.ok:
        problems = [d for d in result.diagnostics if d.severity.value == "error"]
        raise ExportError(
            f"cannot measure {fmt!r}: {problems[0].message}", diagnostics=result.diagnostics
        )
    specs = select(tools, names, tags, toolsets)
    catalog = options["catalog"]
    eager = len(specs)
    if fmt in DEFERRING:
        eager = sum(1 for s in specs if not is_deferred(s, catalog))
    data = result.data
    by_name = {s.name: s for s in specs}
    shown = search_listing(data, by_name, catalog) if search else up_front(data)
    return UpFront(fmt, size_of(shown), size_of(data), eager, len(specs))


def budgets(section: Mapping[str, Any], origin: Any) -> dict[str, int]:
    """``export.budget`` of toolctl.yaml: estimated tokens allowed up front, ``"*"`` for every
    format (``tokens:``) and per format by name (``anthropic: 4000``); a :class:`ConfigError`
    at ``origin()`` (worked out only for the error) for anything else."""
    from toolctl.errors import ConfigError

    value = section.get("budget")
    if value is None:
        return {}
    example = "export: {budget: {tokens: 8000, gemini: 20000}}"
    if not isinstance(value, dict):
        raise ConfigError(
            f"{origin()}: export.budget must be a mapping, not {type(value).__name__}",
            hint=f"e.g. {example}",
        )
    out: dict[str, int] = {}
    for key, limit in value.items():
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise ConfigError(
                f"{origin()}: export.budget.{key} must be a positive whole number of tokens, "
                f"not {limit!r}",
                hint=f"e.g. {example}",
            )
        out["*" if key == "tokens" else str(key)] = limit
    return out


def over_budget(measured: UpFront, limits: Mapping[str, int]) -> int | None:
    """The budget ``measured`` exceeds (its format's, else the ``"*"`` one), or None."""
    limit = limits.get(measured.format, limits.get("*"))
    return limit if limit is not None and measured.tokens > limit else None
