"""Drift: an upstream tool's live definition against the contract ``toolctl.lock`` pinned.

The live definition goes through the same mapping the import used
(:func:`toolctl.imports.mcp.declaration_of`) and the same merge (hand edits kept), and its
contract is compared with the locked one by the contract diff, so a refusal names the change
in ``toolctl diff``'s classes. Anything that cannot be compared is a change too: fail closed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolctl.contract import Change, LockEntry
    from toolctl.spec import ToolSpec


def live_changes(spec: ToolSpec, live_tools: list[Any], locked: LockEntry) -> list[Change]:
    """The changes between the locked contract of ``spec`` and what the upstream lists now."""
    from toolctl.contract import LockEntry as Entry
    from toolctl.contract import diff
    from toolctl.contract.changes import change
    from toolctl.contract.sides import Side

    assert spec.upstream is not None
    wanted = spec.upstream["tool"]
    found = next((t for t in live_tools if isinstance(t, dict) and t.get("name") == wanted), None)
    if found is None:
        return [change(spec.name, "TD101", f"the upstream no longer lists the tool {wanted!r}")]
    try:
        live = _live_spec(spec, found)
        entry = Entry.of(live)
    except Exception as exc:
        return [
            change(
                spec.name,
                "TD115",
                f"the upstream's definition cannot be compared: {type(exc).__name__}",
            )
        ]
    if entry.contract_digest == locked.contract_digest:
        return []
    base = Side("toolctl.lock", {spec.name: locked})
    head = Side("the live upstream", {spec.name: entry}, {spec.name: live})
    return diff(base, head).changes


def _live_spec(spec: ToolSpec, tool: dict[str, Any]) -> ToolSpec:
    """The declaration a re-import would write now, with the local hand edits."""
    from toolctl.imports.files import merge, stamp
    from toolctl.imports.mcp import declaration_of, problem
    from toolctl.spec import ToolSpec as Spec

    why = problem(tool)
    if why is not None:
        raise ValueError(why)
    upstream = {k: v for k, v in (spec.upstream or {}).items() if k != "tool"}
    tag = spec.tags[0] if spec.tags else "upstream"
    fresh = stamp(declaration_of(tool, upstream, spec.name, tag))
    merged = merge(spec.raw, fresh, [])
    return Spec.from_validated(merged, origin=spec.origin, location=spec.location)
