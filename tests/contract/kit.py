"""Helpers: tools built in code (no files), sides and diffs of them."""

from __future__ import annotations

import copy
from collections.abc import Callable
from typing import Any

from toolctl.contract import Side, diff
from toolctl.contract.changes import CODES
from toolctl.contract.diff import DiffResult
from toolctl.contract.model import LockEntry
from toolctl.diagnostics import Location
from toolctl.spec import Origin, ToolSpec

BASE: dict[str, Any] = {
    "name": "weather",
    "description": "Current weather for a city: temperature and conditions.",
    "handler": "pkg.weather:current",
    "inputSchema": {
        "type": "object",
        "properties": {
            "city": {"type": "string", "maxLength": 100, "description": "City name."},
            "units": {"enum": ["c", "f"]},
            "days": {"type": "integer", "minimum": 1, "maximum": 7},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "required": ["city"],
        "additionalProperties": False,
    },
    "outputSchema": {
        "type": "object",
        "properties": {
            "temp": {"type": "number"},
            "cond": {"type": "string", "enum": ["sun", "rain"]},
        },
        "required": ["temp", "cond"],
    },
    "mcp": {
        "annotations": {
            "readOnlyHint": True,
            "destructiveHint": False,
            "openWorldHint": False,
            "idempotentHint": True,
        }
    },
    "requireApproval": True,
    "isolation": "subprocess",
    "timeout": 10,
}


def spec(raw: dict[str, Any]) -> ToolSpec:
    """A ToolSpec for ``raw`` (self-contained schemas: nothing to bundle)."""
    return ToolSpec.from_validated(
        raw, origin=Origin("file", "", "mem.yaml"), location=Location("mem.yaml")
    )


def side(label: str, *raws: dict[str, Any]) -> Side:
    specs = {r["name"]: spec(r) for r in raws}
    return Side(label, {n: LockEntry.of(s) for n, s in specs.items()}, specs)


def variant(edit: Callable[[dict[str, Any]], Any] | None = None, base: Any = None) -> Any:
    """A deep copy of ``base`` (default BASE) changed in place by ``edit``."""
    raw = copy.deepcopy(BASE if base is None else base)
    if edit is not None:
        edit(raw)
    return raw


def run(old: dict[str, Any] | None, new: dict[str, Any] | None) -> DiffResult:
    return diff(side("base", *([old] if old else [])), side("head", *([new] if new else [])))


def labels(result: DiffResult) -> set[str]:
    """``CODE`` for changes of the code's default class, ``CODE:class`` otherwise."""
    out = set()
    for c in result.changes:
        default = CODES[c.code].kind
        out.add(c.code if c.kind is default else f"{c.code}:{c.kind.value}")
    return out
