"""Checking a loaded tool file against the format's JSON Schema, with located diagnostics."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

from toolctl.diagnostics import Diagnostic, Location, error, json_pointer
from toolctl.spec.model import format_schema
from toolctl.yamlsrc import Document, JsonPath

FORMAT_VERSION = 1


@functools.cache
def _fast_validator() -> Any:
    try:
        import jsonschema_rs

        return jsonschema_rs.validator_for(format_schema())
    except Exception:  # pragma: no cover - optional fast path
        return None


@functools.cache
def _slow_validator() -> Any:
    # The one validator factory: ECMA-262 patterns (`$` never matches before a final newline).
    from toolctl.schema import make_validator

    return make_validator(format_schema())


def _allowed_keys(schema_node: Any) -> list[str]:
    if isinstance(schema_node, dict):
        return [k for k in schema_node.get("properties", {}) if k != "toolctl"]
    return []


def _extra_keys(err: Any) -> list[str]:
    """Keys of the offending mapping that neither ``properties`` nor an ``x-`` pattern allow."""
    props = err.schema.get("properties", {}) if isinstance(err.schema, dict) else {}
    patterns = err.schema.get("patternProperties", {}) if isinstance(err.schema, dict) else {}
    return [k for k in err.instance if k not in props and not (patterns and k.startswith("x-"))]


def _best(err: Any) -> Any:
    """Descend into oneOf/anyOf to the most relevant branch error."""
    from jsonschema.exceptions import best_match

    while err.validator in ("oneOf", "anyOf") and err.context:
        # A branch whose type does not even fit the value is the least likely intent:
        # `background: {timeout: -1}` must report the timeout, not "is not of type 'boolean'".
        fitting = [e for e in err.context if e.validator != "type" or e.relative_path]
        err = best_match(fitting or err.context)
    return err


def _diagnostics_for(err: Any, doc: Document) -> list[Diagnostic]:
    err = _best(err)
    path: JsonPath = tuple(err.absolute_path)
    if err.validator == "additionalProperties":
        out = []
        allowed = _allowed_keys(err.schema)
        for key in _extra_keys(err):
            line, col = doc.locate((*path, key), key=True)
            import difflib  # only for an unknown key

            near = difflib.get_close_matches(key, allowed, n=1)
            hint = f"did you mean {near[0]!r}?" if near else "extension keys must start with x-"
            out.append(
                error(
                    Location(doc.file, line, col),
                    "TC201",
                    f"unknown key {key!r}",
                    hint=hint,
                    pointer=json_pointer((*path, key)),
                )
            )
        return out
    forbidden = err.validator_value.get("required") if err.validator == "not" else None
    if forbidden and isinstance(err.instance, dict):
        # `not: {required: [k]}` forbids a key: say so at the key, not by quoting the schema
        key = next((k for k in forbidden if k in err.instance), forbidden[0])
        line, col = doc.locate((*path, key), key=True)
        return [
            error(
                Location(doc.file, line, col),
                "TC201",
                f"key {key!r} is not allowed here",
                hint="`toolctl:` goes once at the top of a file, not inside each tool"
                if key == "toolctl"
                else None,
                pointer=json_pointer((*path, key)),
            )
        ]
    line, col = doc.locate(path)
    where = json_pointer(path) or "the file"
    message = f"{where}: {err.message}" if path else err.message
    return [error(Location(doc.file, line, col), "TC201", message, pointer=json_pointer(path))]


MAX_SHOWN = 50  # format diagnostics reported per file; the rest are counted, not built


@dataclass(frozen=True)
class FormatCheck:
    """What the format check of one file found.

    ``diagnostics`` is capped at :data:`MAX_SHOWN` (what a person reads); ``broken`` and
    ``whole_file`` are worked out from *every* error, so the cap never decides which tools the
    loader builds: a tool with an error past the cap is still left out, never built half-checked.
    """

    diagnostics: list[Diagnostic] = field(default_factory=list)
    broken: frozenset[int] = frozenset()  # index in `tools:` of every tool with an error
    whole_file: bool = False  # an error outside the `tools:` items: nothing in the file loads


def check_format(doc: Document) -> list[Diagnostic]:
    """Diagnostics for everything in ``doc`` that the format v1 schema rejects (capped)."""
    return check_file_format(doc).diagnostics


def check_file_format(doc: Document) -> FormatCheck:
    """The format check of ``doc``: capped diagnostics, and which tools or the file are broken."""
    data = doc.data
    top = Location(doc.file, 1, 1)
    if not isinstance(data, dict):
        return _file_error(
            top,
            "a tool file must be a mapping with `toolctl: 1`",
            hint="start the file with `toolctl: 1` and a tool's keys",
        )
    if "toolctl" not in data:
        return _file_error(
            top, "missing format version", hint="add `toolctl: 1` at the top of the file"
        )
    if data["toolctl"] != FORMAT_VERSION or isinstance(data["toolctl"], bool):
        line, col = doc.locate(("toolctl",))
        return _file_error(
            Location(doc.file, line, col),
            f"unsupported format version {data['toolctl']!r}",
            hint="this toolctl reads `toolctl: 1`",
        )
    fast = _fast_validator()
    if fast is not None and fast.is_valid(data):
        return FormatCheck()
    out: list[Diagnostic] = []
    broken: set[int] = set()
    whole_file = False
    for err in _slow_validator().raw_errors(data):
        path = tuple(err.absolute_path)
        if len(path) >= 2 and path[0] == "tools" and isinstance(path[1], int):
            broken.add(path[1])
        else:
            whole_file = True
        if len(out) < MAX_SHOWN:
            out.extend(_diagnostics_for(err, doc))
    return FormatCheck(out[:MAX_SHOWN], frozenset(broken), whole_file)


def _file_error(loc: Location, message: str, *, hint: str) -> FormatCheck:
    return FormatCheck([error(loc, "TC202", message, hint=hint)], whole_file=True)
