"""The semver gate: a tool's ``version:`` must move as far as its changes require.

A breaking change (or one that cannot be decided) needs a MAJOR bump, a compatible one a MINOR
bump. While MAJOR is 0 the API is not stable (semver item 4), so a MINOR bump is enough for a
breaking change there, as Cargo and npm read ``0.x`` ranges. Safety, text and other changes need
no particular bump. The gate applies when both sides declare a version.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from toolctl.contract.changes import Change, Kind, change

_SEMVER = re.compile(
    r"(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(?:-([0-9A-Za-z.-]+))?(?:\+[0-9A-Za-z.-]+)?\Z"
)


def parse(version: str) -> tuple[int, int, int, bool] | None:
    """``(major, minor, patch, is_prerelease)``, or None when ``version`` is not semver."""
    match = _SEMVER.match(version)
    if match is None:
        return None
    return int(match[1]), int(match[2]), int(match[3]), match[4] is not None


def required_bump(changes: Iterable[Change]) -> str | None:
    """``"major"``, ``"minor"`` or None: what the changes of one tool require."""
    kinds = {c.kind for c in changes}
    if Kind.BREAKING in kinds or Kind.UNDECIDED in kinds:
        return "major"
    if Kind.COMPATIBLE in kinds:
        return "minor"
    return None


def gate(tool: str, old: str | None, new: str | None, changes: list[Change]) -> list[Change]:
    """Semver findings for one tool changed from version ``old`` to ``new``."""
    if old is None or new is None:
        return []
    v_o, v_n = parse(old), parse(new)
    if v_o is None or v_n is None:
        bad = old if v_o is None else new
        return [change(tool, "TD403", f"version {bad!r} is not MAJOR.MINOR.PATCH", ("version",))]
    if v_n[:3] < v_o[:3]:
        return [change(tool, "TD403", f"version went down: {old} → {new}", ("version",))]
    needed = required_bump(changes)
    major_bumped = v_n[0] > v_o[0] or (v_o[0] == 0 and v_n[1] > v_o[1])
    minor_bumped = v_n[:2] > v_o[:2]
    why = next((c for c in changes if c.kind in (Kind.BREAKING, Kind.UNDECIDED)), None)
    if needed == "major" and not major_bumped and why is not None:
        target = f"{v_o[0] + 1}.0.0" if v_o[0] else f"0.{v_o[1] + 1}.0"
        return [
            change(
                tool,
                "TD401",
                f"a {why.kind.value} change needs version {target} or "
                f"later (was {old}, now {new}): {why.message}",
                ("version",),
            )
        ]
    first = next((c for c in changes if c.kind is Kind.COMPATIBLE), None)
    if needed == "minor" and not minor_bumped and first is not None:
        target = f"{v_o[0]}.{v_o[1] + 1}.0"
        return [
            change(
                tool,
                "TD402",
                f"a compatible change needs version {target} or later "
                f"(was {old}, now {new}): {first.message}",
                ("version",),
            )
        ]
    return []
