"""The set of tools a server offers: an immutable snapshot swapped whole on reload."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from toolctl.catalog import scopes_of
from toolctl.export.mcpsearch import META_NAMES, search_listing

if TYPE_CHECKING:
    from toolctl.diagnostics import Diagnostic
    from toolctl.principal import Principal
    from toolctl.registry import Registry
    from toolctl.spec import ToolSpec


@dataclass(frozen=True)
class Selection:
    """Which tools to serve: ``--tool`` names and ``--tag`` tags (empty means all enabled)."""

    names: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    # --search: list the eager tools plus search_tools and call_tool (deferred ones stay
    # callable by name); see toolctl.export.mcpsearch
    search: bool = False


@dataclass(frozen=True)
class ToolSet:
    """The served tools by name, and their ``tools/list`` results.

    A call reads the current snapshot once and uses it to the end, so a reload never mixes two
    registries inside one call. ``listing`` (2025-11-25) is built with the snapshot: building it
    is the check that refuses tools MCP cannot carry, at start-up and on reload, before
    anything is served. The 2026-07-28 listing is built on first use (a client speaks one
    revision): the export refuses the same tools under both revisions, so building it later
    cannot fail.
    """

    registry: Registry
    specs: dict[str, ToolSpec]
    listing: dict[str, Any] = field(repr=False)
    diagnostics: list[Diagnostic] = field(default_factory=list, repr=False)
    _later: dict[str, dict[str, Any]] = field(default_factory=dict, repr=False, compare=False)
    # --search: ``listing`` holds the eager tools and the meta-tools; ``full`` every tool
    search: bool = False
    full: dict[str, Any] | None = field(default=None, repr=False)
    # name -> the scopes a token needs to see and call the tool (tools that need some only)
    scopes: dict[str, tuple[str, ...]] = field(default_factory=dict, repr=False)
    _hidden: dict[frozenset[str], frozenset[str]] = field(
        default_factory=dict, repr=False, compare=False
    )
    _header_schemas: dict[str, dict[str, Any] | None] = field(
        default_factory=dict, repr=False, compare=False
    )

    def header_schema(self, name: str) -> dict[str, Any] | None:
        """The input schema of tool ``name`` when it declares ``x-mcp-header`` anywhere: what
        the SDK checks a 2026-07-28 call's ``Mcp-Param-*`` headers against. None for any other
        tool (no declared header: nothing to check), so the SDK does not walk its schema twice
        on every call to find that out. Remembered per snapshot."""
        if name in self._header_schemas:
            return self._header_schemas[name]
        spec = self.specs.get(name)
        schema = spec.input_schema if spec is not None else None
        found = schema if isinstance(schema, dict) and _has_key(schema, HEADER_KEY) else None
        if len(self._header_schemas) < len(self.specs) + 16:  # bounded: names come from callers
            self._header_schemas[name] = found
        return found

    def hidden_from(self, principal: Principal | None) -> frozenset[str]:
        """The tools ``principal`` may neither see nor call (it lacks their ``scopes``); none
        for the local operator (None). Cached per set of scopes a token holds."""
        if principal is None or not self.scopes:
            return frozenset()
        held = principal.scopes
        hidden = self._hidden.get(held)
        if hidden is None:
            if len(self._hidden) > 1024:  # bounded: scope sets come from tokens
                self._hidden.clear()
            hidden = frozenset(n for n, need in self.scopes.items() if not held.issuperset(need))
            self._hidden[held] = hidden
        return hidden

    @property
    def modern_listing(self) -> dict[str, Any]:
        """The ``tools/list`` result of protocol 2026-07-28 (any ``outputSchema``, cache
        hints), built on first use."""
        listing = self._later.get(MODERN)
        if listing is None:
            listing = self.full_listing(MODERN)
            if self.search:
                listing = search_listing(listing, self.specs, self.registry.toolsets)
            self._later[MODERN] = listing
        return listing

    def full_listing(self, protocol: str) -> dict[str, Any]:
        """Every served tool's ``tools/list`` entry for ``protocol`` (what ``search_tools``
        returns from), built on first use."""
        if protocol != MODERN:
            return self.full if self.full is not None else self.listing
        key = f"{MODERN} full"
        listing = self._later.get(key)
        if listing is None:
            # A list that depends on the token's scopes is not for a shared cache.
            scope = "private" if self.scopes else "public"
            listing, _ = mcp_listing(
                list(self.specs.values()), MODERN, mcp_ttl_ms=LIST_TTL_MS, mcp_cache_scope=scope
            )
            self._later[key] = listing
        return listing

    def tool_entries(self, names: Sequence[str], protocol: str) -> list[dict[str, Any]]:
        """The full MCP Tool objects of the served tools ``names`` (others skipped), in order."""
        by_name = self._later.get(f"{protocol} index")
        if by_name is None:
            by_name = {t["name"]: t for t in self.full_listing(protocol)["tools"]}
            self._later[f"{protocol} index"] = by_name
        return [by_name[n] for n in names if n in by_name]

    @property
    def fingerprint(self) -> dict[str, str]:
        """Tool name to declaration digest: what a reload compares."""
        return {name: spec.digest for name, spec in self.specs.items()}


HEADER_KEY = "x-mcp-header"


def _has_key(node: Any, key: str) -> bool:
    """Whether ``key`` is a key of any mapping in the JSON value ``node`` (at any depth)."""
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            if key in item:
                return True
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return False


def build_toolset(registry: Registry, selection: Selection | None = None) -> ToolSet:
    """Select the tools to serve (enabled ones, in name order) and build their 2025-11-25
    listing (the 2026-07-28 one is built on first use).

    Raises :class:`~toolctl.errors.UnknownToolError` for a ``--tool`` name the registry lacks,
    and :class:`~toolctl.errors.DisabledToolError` for one that is disabled.
    """
    selection = selection or Selection()
    specs: Sequence[ToolSpec] = registry.select(selection.names or None, selection.tags or None)
    for spec in specs:
        spec.check_enabled("serve")
    listing, diagnostics = mcp_listing(specs)
    by_name = {s.name: s for s in specs}
    scopes = {s.name: need for s in specs if (need := scopes_of(s, registry.toolsets))}
    if not selection.search:
        return ToolSet(registry, by_name, listing, diagnostics, scopes=scopes)
    clash = sorted(META_NAMES & set(by_name))
    if clash:
        from toolctl.errors import UsageError

        spec = by_name[clash[0]]
        raise UsageError(
            f"{spec.location}: tool {clash[0]!r} has the name of a --search meta-tool",
            hint=f"rename it, or serve without --search ({', '.join(sorted(META_NAMES))} are "
            "listed by the server itself)",
        )
    served = search_listing(listing, by_name, registry.toolsets)
    return ToolSet(registry, by_name, served, diagnostics, search=True, full=listing, scopes=scopes)


MODERN = "2026-07-28"
LIST_TTL_MS = (
    300_000  # how long a 2026-07-28 client may reuse tools/list (the server: 0 when reloading)
)


def mcp_listing(
    specs: Sequence[ToolSpec], protocol: str = "2025-11-25", **options: Any
) -> tuple[dict[str, Any], list[Diagnostic]]:
    """The ``tools/list`` result for ``specs``: the ``mcp`` export of ``protocol``, so the
    server lists exactly what ``toolctl export mcp`` writes. Raises when it refuses."""
    from toolctl.errors import ExportError
    from toolctl.export import export_result

    result = export_result(
        specs, "mcp", names=[s.name for s in specs], mcp_protocol=protocol, **options
    )
    if not result.ok:
        problems = [d for d in result.diagnostics if d.severity.value == "error"]
        raise ExportError(
            f"cannot serve these tools over MCP: {problems[0].message}",
            hint="toolctl export mcp shows every problem",
            diagnostics=result.diagnostics,
        )
    listing: dict[str, Any] = result.data
    return listing, result.diagnostics


def listing_changed(old: ToolSet, new: ToolSet) -> bool:
    """Whether a client's ``tools/list`` may differ between two snapshots: a tool's declaration,
    or what the toolsets decide (which tools are listed up front under ``--search``, which
    scopes a token needs to see a tool)."""
    return (
        old.fingerprint != new.fingerprint or old.listing != new.listing or old.scopes != new.scopes
    )


def describe_change(old: ToolSet, new: ToolSet) -> str:
    """``+added -removed ~changed`` tool names between two snapshots (for the reload log)."""
    before, after = old.fingerprint, new.fingerprint
    added = sorted(set(after) - set(before))
    removed = sorted(set(before) - set(after))
    changed = sorted(n for n in set(before) & set(after) if before[n] != after[n])
    parts = [f"+{n}" for n in added] + [f"-{n}" for n in removed] + [f"~{n}" for n in changed]
    if not parts and listing_changed(old, new):
        return "toolsets changed: what is listed or who may see it"
    return " ".join(parts) or "no tool changed"
