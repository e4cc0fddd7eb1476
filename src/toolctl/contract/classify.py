"""Classify the differences between two locked versions of one tool (pure functions).

Schemas go through :mod:`toolctl.contract.schemadiff`; on the input side (``inputSchema``,
``requestContextSchema``, ``resumeSchema``) narrowing breaks former calls, on the output side
(``outputSchema``, ``suspendSchema``) widening breaks former readers. Hints, approval and the
execution policy are compared with MCP's defaults (``destructiveHint`` and ``openWorldHint`` are
true when absent).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from toolctl.contract.changes import Change, Kind, change
from toolctl.contract.model import LockEntry
from toolctl.contract.schemadiff import Effect, compare, same, where
from toolctl.yamlsrc import JsonPath

_INPUT = {
    Effect.NARROWS: ("TD111", Kind.BREAKING),
    Effect.WIDENS: ("TD112", Kind.COMPATIBLE),
    Effect.UNDECLARED: ("TD112", Kind.COMPATIBLE),
    Effect.UNKNOWN: ("TD115", Kind.UNDECIDED),
    Effect.TEXT: ("TD119", Kind.TEXT),
}
_OUTPUT = {
    Effect.NARROWS: ("TD114", Kind.COMPATIBLE),
    Effect.UNDECLARED: ("TD114", Kind.COMPATIBLE),
    Effect.WIDENS: ("TD113", Kind.BREAKING),
    Effect.UNKNOWN: ("TD115", Kind.UNDECIDED),
    Effect.TEXT: ("TD119", Kind.TEXT),
}
# (hint, MCP default, the risky value, code when it turns risky, code when it loosens). Both
# directions are safety changes: hosts act on the hints (a read-only tool is often run without
# asking), so a tool that starts claiming less risk must be reviewed before that is trusted.
_HINTS = (
    ("readOnlyHint", False, False, "TD201", "TD210"),
    ("destructiveHint", True, True, "TD202", "TD211"),
    ("openWorldHint", True, True, "TD203", "TD212"),
    ("idempotentHint", False, False, "TD204", "TD213"),
)
_VALIDATION_RANK = {"off": 0, "warn": 1, "strict": 2}
_HANDLED_CONTRACT = frozenset(
    {
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "requireApproval",
        "strict",
        "inputExamples",
        "toModelOutput",
    }
)
_HANDLED_RUNTIME = frozenset(
    {
        "isolation",
        "timeout",
        "callsPerMinute",
        "scopes",
        "background",
        "outputValidation",
        "requestContextSchema",
        "resumeSchema",
        "suspendSchema",
    }
)
# Declaration keys whose changes the contract and runtime blocks already describe.
_COVERED_RAW = frozenset(
    {
        "toolctl",
        "name",
        "title",
        "description",
        "handler",
        "version",
        "inputSchema",
        "outputSchema",
        "outputValidation",
        "strict",
        "requireApproval",
        "suspendSchema",
        "resumeSchema",
        "requestContextSchema",
        "toModelOutput",
        "mcp",
        "providerOptions",
        "inputExamples",
        "background",
        "timeout",
        "limits",
        "scopes",
        "isolation",
        "enabled",
    }
)


def schema_changes(tool: str, key: str, old: Any, new: Any, *, output: bool) -> Iterator[Change]:
    """The classified changes between two versions of the schema at declaration key ``key``."""
    table = _OUTPUT if output else _INPUT
    side = {"inputSchema": "input", "outputSchema": "output"}.get(key, key)
    for found in compare(old, new):
        code, kind = table[found.effect]
        text = (
            f"{side} `{found.place}`: {found.detail}" if found.place else f"{side}: {found.detail}"
        )
        yield change(tool, code, text, (key, *found.path), kind=kind, old=found.old, new=found.new)


def _text(tool: str, code: str, label: str, old: Any, new: Any, path: JsonPath) -> Change:
    verb = "added" if old is None else "removed" if new is None else "changed"
    return change(tool, code, f"{label} {verb}", path, old=old, new=new)


def _hints(tool: str, old: dict[str, Any], new: dict[str, Any]) -> Iterator[Change]:
    a_o, a_n = old.get("annotations") or {}, new.get("annotations") or {}
    for hint, default, risky, code, loosened in _HINTS:
        v_o, v_n = a_o.get(hint, default), a_n.get(hint, default)
        if v_o == v_n:
            continue
        path = ("mcp", "annotations", hint)
        text = f"{hint} {str(v_o).lower()} → {str(v_n).lower()}"
        if v_n == risky:
            yield change(tool, code, f"{text}: the tool needs re-approval", path)
        else:
            yield change(tool, loosened, f"{text}: hosts may now run it without asking", path)
    if a_o.get("title") != a_n.get("title") and old.get("title") == new.get("title"):
        yield _text(
            tool,
            "TD302",
            "annotations.title",
            a_o.get("title"),
            a_n.get("title"),
            ("mcp", "annotations", "title"),
        )
    others = sorted((set(a_o) | set(a_n)) - {h[0] for h in _HINTS} - {"title"})
    for key in others:
        if not same(a_o.get(key), a_n.get(key)):
            yield change(tool, "TD501", f"annotations.{key} changed", ("mcp", "annotations", key))


def _open_objects(schema: Any, path: JsonPath = ()) -> Iterator[JsonPath]:
    """Places in ``schema`` where an object accepts undeclared properties."""
    if not isinstance(schema, dict):
        return
    if "properties" in schema and schema.get("additionalProperties", True) is not False:
        yield path
    for key in ("properties", "$defs", "patternProperties"):
        for name, sub in (schema.get(key) or {}).items():
            yield from _open_objects(sub, (*path, key, name))
    for key in ("items", "additionalProperties"):
        yield from _open_objects(schema.get(key), (*path, key))
    for key in ("anyOf", "allOf", "oneOf", "prefixItems"):
        for i, sub in enumerate(schema.get(key) or []):
            yield from _open_objects(sub, (*path, key, i))


def _approval_label(value: Any) -> str:
    return "{when}" if isinstance(value, dict) else str(bool(value)).lower()


def _approval(tool: str, old: Any, new: Any) -> Iterator[Change]:
    """``requireApproval`` between true, ``{when: schema}`` and false: any loosening (fewer
    calls approved, or a condition we cannot compare) is a safety change."""
    if same(old, new) or (not old and not new):
        return
    text = f"requireApproval {_approval_label(old)} → {_approval_label(new)}"
    at = ("requireApproval",)
    if not new:
        yield change(tool, "TD205", f"{text}: calls run without approval", at)
    elif old is True:  # new is a condition
        unapproved = f"{text}: calls the condition does not match run unapproved"
        yield change(tool, "TD214", unapproved, at)
    elif new is True or not old:
        yield change(tool, "TD503", text, at)
    else:  # both conditions: whether the new one matches fewer calls is undecidable here
        yield change(
            tool,
            "TD215",
            "requireApproval.when changed: calls it no longer matches run unapproved",
            (*at, "when"),
        )


def _switches(tool: str, old: dict[str, Any], new: dict[str, Any]) -> Iterator[Change]:
    yield from _approval(tool, old.get("requireApproval", False), new.get("requireApproval", False))
    if new.get("strict", False) and not old.get("strict", False):
        opened = next(_open_objects(new["inputSchema"]), None)
        if opened is not None:
            yield change(
                tool,
                "TD116",
                "strict false → true: strict mode closes objects, so "
                f"calls with undeclared properties at {where(opened) or 'the root'} are refused",
                ("strict",),
            )
        else:
            yield change(
                tool,
                "TD116",
                "strict false → true (every object already closed)",
                ("strict",),
                kind=Kind.COMPATIBLE,
            )
    elif old.get("strict", False) and not new.get("strict", False):
        yield change(tool, "TD116", "strict true → false", ("strict",), kind=Kind.COMPATIBLE)


def _contract(tool: str, old: dict[str, Any], new: dict[str, Any]) -> Iterator[Change]:
    for key, code in (("description", "TD301"), ("title", "TD302")):
        if old.get(key) != new.get(key):
            yield _text(tool, code, key, old.get(key), new.get(key), (key,))
    yield from schema_changes(
        tool, "inputSchema", old["inputSchema"], new["inputSchema"], output=False
    )
    yield from schema_changes(
        tool, "outputSchema", old.get("outputSchema"), new.get("outputSchema"), output=True
    )
    yield from _hints(tool, old, new)
    yield from _switches(tool, old, new)
    for key, code, label in (
        ("inputExamples", "TD303", "inputExamples"),
        ("toModelOutput", "TD304", "toModelOutput (what the model sees of the output)"),
    ):
        if not same(old.get(key), new.get(key)):
            yield _text(tool, code, label, _dump(old.get(key)), _dump(new.get(key)), (key,))
    for key in sorted((set(old) | set(new)) - _HANDLED_CONTRACT):
        if not same(old.get(key), new.get(key)):
            path = ("mcp", key) if key in ("icons", "_meta") else (key,)
            yield change(tool, "TD501", f"{key} changed", path)


def _runtime(tool: str, old: dict[str, Any], new: dict[str, Any]) -> Iterator[Change]:
    if old.get("isolation") != new.get("isolation"):
        text = f"isolation {old.get('isolation')} → {new.get('isolation')}"
        if new.get("isolation") == "inprocess":
            yield change(
                tool, "TD206", f"{text}: the handler shares the server's process", ("isolation",)
            )
        else:
            yield change(tool, "TD503", text, ("isolation",))
    t_o, t_n = old.get("timeout"), new.get("timeout")
    if t_o != t_n:
        text = (
            f"timeout {t_o if t_o is not None else 'none'} → {t_n if t_n is not None else 'none'}"
        )
        if t_o is not None and (t_n is None or t_n > t_o):
            yield change(tool, "TD207", text, ("timeout",))
        else:
            yield change(tool, "TD503", text, ("timeout",))
    yield from _rate_limit(tool, old.get("callsPerMinute"), new.get("callsPerMinute"))
    yield from _scopes(tool, old.get("scopes", []), new.get("scopes", []))
    v_o, v_n = old.get("outputValidation", "strict"), new.get("outputValidation", "strict")
    if v_o != v_n:
        text = f"outputValidation {v_o} → {v_n}"
        if _VALIDATION_RANK.get(v_n, 0) < _VALIDATION_RANK.get(v_o, 0):
            yield change(
                tool,
                "TD117",
                f"{text}: outputs outside outputSchema may reach callers",
                ("outputValidation",),
            )
        else:
            yield change(tool, "TD503", text, ("outputValidation",))
    if bool(old.get("background")) != bool(new.get("background")):
        if new.get("background"):
            yield change(
                tool,
                "TD118",
                "background false → true: calls return before the result",
                ("background",),
            )
        else:
            yield change(
                tool, "TD118", "background true → false", ("background",), kind=Kind.COMPATIBLE
            )
    for key, output in (
        ("requestContextSchema", False),
        ("resumeSchema", False),
        ("suspendSchema", True),
    ):
        yield from schema_changes(tool, key, old.get(key), new.get(key), output=output)
    for key in sorted((set(old) | set(new)) - _HANDLED_RUNTIME):
        if not same(old.get(key), new.get(key)):
            yield change(tool, "TD501", f"{key} changed", (key,))


def _scopes(tool: str, old: list[str], new: list[str]) -> Iterator[Change]:
    """``scopes``: one removed lets tokens without it see and call the tool (safety); only
    added ones narrow who may (compatible)."""
    dropped, added = sorted(set(old) - set(new)), sorted(set(new) - set(old))
    if dropped:
        text = f"scopes {old} → {new}: tokens without {', '.join(dropped)} may call it"
        yield change(tool, "TD217", text, ("scopes",))
    elif added:
        yield change(tool, "TD503", f"scopes {old} → {new}", ("scopes",))


def _rate_limit(tool: str, old: int | None, new: int | None) -> Iterator[Change]:
    """``limits.callsPerMinute``: raised or removed lets more calls through (safety)."""
    if old == new:
        return
    text = f"limits.callsPerMinute {old if old is not None else 'none'} → "
    text += str(new) if new is not None else "none"
    at = ("limits", "callsPerMinute")
    if old is not None and (new is None or new > old):
        yield change(tool, "TD216", text, at)
    else:
        yield change(tool, "TD503", text, at)


def _dump(value: Any) -> str | None:
    import json

    if value is None:
        return None
    return json.dumps(value, indent=2, ensure_ascii=False, sort_keys=True)


def compare_tool(old: LockEntry, new: LockEntry) -> list[Change]:
    """Every classified change between two versions of one tool (same name)."""
    if (
        old.contract_digest == new.contract_digest
        and old.declaration_digest == new.declaration_digest
        and old.handler == new.handler
        and same(old.runtime, new.runtime)
    ):
        return []
    tool = new.name
    found = [
        *_contract(tool, old.contract, new.contract),
        *_runtime(tool, old.runtime, new.runtime),
    ]
    if old.handler != new.handler:
        found.append(change(tool, "TD208", f"handler {old.handler} → {new.handler}", ("handler",)))
    if old.version != new.version:
        found.append(
            change(
                tool,
                "TD504",
                f"version {old.version or 'none'} → {new.version or 'none'}",
                ("version",),
            )
        )
    if old.declaration_digest != new.declaration_digest:
        found.extend(_declaration(tool, old, new, bool(found)))
    return found


def _declaration(tool: str, old: LockEntry, new: LockEntry, explained: bool) -> Iterator[Change]:
    if old.raw is not None and new.raw is not None:
        keys = sorted(
            k
            for k in (set(old.raw) | set(new.raw)) - _COVERED_RAW
            if not same(old.raw.get(k), new.raw.get(k))
        )
        if keys:
            yield change(
                tool,
                "TD502",
                f"declaration changed outside the contract: {', '.join(keys)}",
                (keys[0],),
            )
            return
    if not explained:
        yield change(
            tool,
            "TD502",
            "declaration changed outside the contract "
            "(tests, hooks, transforms, metadata, tags, ...)",
        )
