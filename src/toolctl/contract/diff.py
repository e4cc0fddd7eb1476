"""``diff(base, head)``: every classified change between two sides, with the semver gate.

Tools are matched by name; a removed tool whose contract reappears under another name is a
rename. Tools whose digests all match are skipped without looking inside, so a diff costs time
only for what changed. New model-visible text is run through the lint security rules (tool
poisoning): a finding the base did not have is a ``safety`` change.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from toolctl.contract import semver
from toolctl.contract.canonical import digest
from toolctl.contract.changes import Change, Kind, change
from toolctl.contract.classify import compare_tool
from toolctl.contract.model import LockEntry
from toolctl.contract.sides import Side
from toolctl.diagnostics import Diagnostic, Location

if TYPE_CHECKING:
    from toolctl.spec import ToolSpec


_FAILING = {
    "breaking": {Kind.BREAKING, Kind.UNDECIDED, Kind.SEMVER},
    "safety": {Kind.BREAKING, Kind.UNDECIDED, Kind.SEMVER, Kind.SAFETY},
    "any": set(Kind),
}
FAIL_ON = tuple(_FAILING)
"""The ``--fail-on`` policies: breaking (and undecided), those and safety, or any change.
A missing version bump (semver) fails all of them."""


@dataclass
class DiffResult:
    """The changes between ``base`` and ``head``, sorted by tool then seriousness."""

    base: Side
    head: Side
    changes: list[Change] = field(default_factory=list)

    @property
    def counts(self) -> dict[str, int]:
        """Number of changes per class, most serious first (classes with none left out)."""
        found = Counter(c.kind for c in self.changes)
        return {k.value: found[k] for k in sorted(found, key=lambda k: k.rank)}

    def failing(self, fail_on: str = "breaking") -> list[Change]:
        """The changes that make the diff fail under ``fail_on`` (one of :data:`FAIL_ON`)."""
        if fail_on not in _FAILING:
            raise ValueError(f"fail_on must be one of {', '.join(FAIL_ON)}, not {fail_on!r}")
        return [c for c in self.changes if c.kind in _FAILING[fail_on]]

    def versions(self, tool: str) -> tuple[str | None, str | None]:
        """The tool's version on each side (None where absent or not declared)."""
        old, new = self.base.entries.get(tool), self.head.entries.get(tool)
        return (old.version if old else None, new.version if new else None)

    def location(self, item: Change) -> Location | None:
        """Where the change is written: on the head side, or on the base for a removed tool."""
        side = self.head if item.tool in self.head.specs else self.base
        return side.locate(item.tool, item.path)


def _without_name(entry: LockEntry) -> str:
    contract = {k: v for k, v in entry.contract.items() if k != "name"}
    return digest({"contract": contract, "runtime": entry.runtime, "handler": entry.handler})


def _membership(base: Side, head: Side) -> list[Change]:
    removed = sorted(set(base.entries) - set(head.entries))
    added = sorted(set(head.entries) - set(base.entries))
    out: list[Change] = []
    by_shape: dict[str, list[str]] = {}
    for name in added:
        by_shape.setdefault(_without_name(head.entries[name]), []).append(name)
    renamed_to: set[str] = set()
    for name in removed:
        twins = by_shape.get(_without_name(base.entries[name])) or []
        if twins:
            target = twins.pop(0)
            renamed_to.add(target)
            out.append(
                change(
                    target,
                    "TD102",
                    f"tool renamed: {name} → {target} (callers of {name} fail)",
                    ("name",),
                )
            )
        else:
            out.append(change(name, "TD101", f"tool {name} removed (or disabled)"))
    for name in added:
        if name not in renamed_to:
            out.append(change(name, "TD103", f"new tool {name}"))
    return out


def _spec_of(side: Side, name: str) -> ToolSpec | None:
    """The tool as loaded, or rebuilt from its locked contract (for lock-file sides)."""
    if name in side.specs:
        return side.specs[name]
    entry = side.entries.get(name)
    if entry is None:
        return None
    from toolctl.spec import Origin, ToolSpec

    contract = entry.contract
    raw = {k: v for k, v in contract.items() if k not in ("annotations", "icons", "_meta")}
    mcp = {k: contract[k] for k in ("annotations", "icons", "_meta") if k in contract}
    if mcp:
        raw["mcp"] = mcp
    return ToolSpec.from_validated(
        raw, origin=Origin("file", "", side.label), location=Location(side.label)
    )


def _security(specs: list[ToolSpec]) -> dict[str, list[Diagnostic]]:
    from toolctl.lint import LintConfig, lint_tools

    found: dict[str, list[Diagnostic]] = {}
    for d in lint_tools(specs, LintConfig(select=("security",))):
        if d.tool:
            found.setdefault(d.tool, []).append(d)
    return found


def _poisoning(base: Side, head: Side, names: list[str]) -> list[Change]:
    """Security findings in the head's text that the base did not have."""
    heads = [s for s in (_spec_of(head, n) for n in names) if s is not None]
    bases = [s for s in (_spec_of(base, n) for n in names) if s is not None]
    if not heads:
        return []
    new, old = _security(heads), _security(bases)
    out = []
    for name, findings in sorted(new.items()):
        known = {(d.code, d.pointer, d.message) for d in old.get(name, [])}
        for d in findings:
            if (d.code, d.pointer, d.message) in known:
                continue
            path = tuple(p.replace("~1", "/").replace("~0", "~") for p in d.pointer.split("/")[1:])
            out.append(
                change(
                    name,
                    "TD209",
                    f"new text has tool-poisoning signs ({d.code}): {d.message}",
                    path,
                )
            )
    return out


def diff(base: Side, head: Side) -> DiffResult:
    """Classify every change from ``base`` to ``head`` (see :mod:`toolctl.contract`)."""
    changes = _membership(base, head)
    touched = [c.tool for c in changes if c.code == "TD103"]
    for name in sorted(set(base.entries) & set(head.entries)):
        old, new = base.entries[name], head.entries[name]
        found = compare_tool(old, new)
        if not found:
            continue
        touched.append(name)
        changes.extend(found)
        changes.extend(semver.gate(name, old.version, new.version, found))
    if touched:
        changes.extend(_poisoning(base, head, touched))
    changes.sort(key=lambda c: (c.tool, c.kind.rank, c.code, c.message))
    return DiffResult(base, head, changes)
