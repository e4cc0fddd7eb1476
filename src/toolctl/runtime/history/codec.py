"""One codec between :class:`~toolctl.runtime.history.records.RunRecord` and the columns of the SQL
stores (SQLite and PostgreSQL): which columns hold JSON, how values are written, and how a row is
read back, damaged columns included."""

from __future__ import annotations

import functools
import json
import operator
from collections.abc import Mapping
from typing import Any

from toolctl.runtime.history.records import FIELDS as FIELDS
from toolctl.runtime.history.records import RunRecord
from toolctl.runtime.result import ErrorCode

# Every column of the run table (SQLite's ``runs``, PostgreSQL's ``toolctl_runs``) in table
# order, with its type as SQLite spells it: ``json`` is TEXT holding JSON, ``bool`` an INTEGER
# in SQLite and a BOOLEAN in PostgreSQL, and PostgreSQL spells REAL as DOUBLE PRECISION. Both
# stores' CREATE TABLE come from here (a new column also needs a migration step in each store).
COLUMNS: dict[str, str] = {
    "run_id": "TEXT PRIMARY KEY",
    "tool": "TEXT NOT NULL",
    "status": "TEXT NOT NULL",
    "tool_digest": "TEXT NOT NULL",
    "input_hash": "TEXT",
    "input": "json",
    "output": "json",
    "error": "json",
    "suspend": "json",
    "resume": "json",
    "notes": "json",
    "raw_input": "json",
    "raw_context": "json",
    "approval": "json",
    "background": "bool",
    "timeout": "REAL",
    "created_at": "REAL NOT NULL",
    "started_at": "REAL",
    "ended_at": "REAL",
    "duration_ms": "REAL",
    "owner": "TEXT",
    "owner_pid": "INTEGER",
    "owner_host": "TEXT",
    "owner_start": "TEXT",
    "lease_expires": "REAL",
    "resume_count": "INTEGER NOT NULL DEFAULT 0",
    "registry": "json",
    "model_output": "json",
    "display": "json",
    "binding": "TEXT",
    "traceback": "TEXT",
    "origin": "TEXT",
    "principal": "json",
    "raw_resume": "json",
}

JSON_COLUMNS = frozenset(name for name, kind in COLUMNS.items() if kind == "json")


def create_table(table: str, *, postgres: bool = False) -> str:
    """The ``CREATE TABLE IF NOT EXISTS`` statement of the run table in either dialect."""
    spelled = {
        "json": "TEXT",
        "bool": "BOOLEAN NOT NULL DEFAULT FALSE" if postgres else "INTEGER NOT NULL DEFAULT 0",
    }
    lines = []
    for name, kind in COLUMNS.items():
        sql_type = spelled.get(kind, kind)
        if postgres:
            sql_type = sql_type.replace("REAL", "DOUBLE PRECISION")
        lines.append(f"    {name:<13} {sql_type}")
    return f"CREATE TABLE IF NOT EXISTS {table} (\n" + ",\n".join(lines) + "\n)"


# One encoder (json.dumps with options builds a new encoder on every call), compact. The values
# are the runtime's own checked JSON (views, notes, locators): no cycle to look for.
_to_json = json.JSONEncoder(
    ensure_ascii=False, allow_nan=False, check_circular=False, separators=(",", ":")
).encode


_JSON_AT = tuple(i for i, name in enumerate(FIELDS) if name in JSON_COLUMNS)
_BACKGROUND_AT = FIELDS.index("background")
_fields_of = operator.attrgetter(*FIELDS)


@functools.lru_cache(maxsize=256)
def _key(key: str) -> str:
    """An object key as JSON text (the few key names of the views, encoded once)."""
    return _to_json(key)


def _json(value: Any, made: dict[int, str]) -> Any:
    """``value`` as JSON text. ``made``: the texts of the objects this row encoded so far, by
    identity: a mapping holding one of them (the display views hold the very input and output
    views stored beside them; the stored model output the output view) is written around
    that text instead of encoding the object again."""
    if value is None:
        return None
    kind = type(value)
    if kind is list and not value:
        return "[]"  # a run's usual notes: no encoder call for them
    if (
        kind is dict
        and made
        and any(id(item) in made for item in value.values())
        and all(type(key) is str for key in value)
    ):
        parts = []
        for key, item in value.items():
            text = made.get(id(item))
            parts.append(f"{_key(key)}:{_to_json(item) if text is None else text}")
        return "{" + ",".join(parts) + "}"
    text = _to_json(value)
    if kind is dict or kind is list:
        made[id(value)] = text
    return text


def record_values(
    record: RunRecord, *, booleans: bool = False, made: dict[int, str] | None = None
) -> list[Any]:
    """The column values of every field of ``record``, in :data:`FIELDS` order (the hot path
    of an insert: one pass, the JSON columns by position, each object encoded once): JSON
    text for the JSON columns, ``background`` as an integer (SQLite) or a boolean
    (``booleans``: PostgreSQL). ``made`` receives the text of each object encoded whole, by
    identity (a column written around texts already made is not among them)."""
    values = list(_fields_of(record))
    made = {} if made is None else made
    for i in _JSON_AT:
        values[i] = _json(values[i], made)
    background = bool(values[_BACKGROUND_AT])
    values[_BACKGROUND_AT] = background if booleans else int(background)
    return values


def change_values(changes: Mapping[str, Any], *, booleans: bool = False) -> list[Any]:
    """The column value of each value of ``changes``, in order (as :func:`record_values`)."""
    made: dict[int, str] = {}
    return [
        _json(value, made)
        if name in JSON_COLUMNS
        else ((bool(value) if booleans else int(bool(value))) if name == "background" else value)
        for name, value in changes.items()
    ]


def like_prefix(run_id: str) -> str:
    """A ``LIKE ... ESCAPE '\\'`` pattern matching the ids that start with ``run_id``
    (its ``%`` and ``_`` taken literally)."""
    escaped = run_id.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
    return escaped + "%"


MAX_QUERY_LIMIT = 2**63 - 1  # SQL LIMIT is a signed 64-bit integer in SQLite and PostgreSQL


def query_limit(limit: int) -> int:
    """``limit`` as a SQL ``LIMIT`` can take it: more than :data:`MAX_QUERY_LIMIT` runs is all
    of them (the driver would otherwise fail with an overflow, blamed on the database)."""
    return max(0, min(int(limit), MAX_QUERY_LIMIT))


def query_where(
    tool: str | None, status: str | None, mark: str, principal: str | None = None
) -> tuple[str, list[Any]]:
    """The ``WHERE`` clause (empty without filters) of a runs query and its arguments, with
    ``mark`` the driver's placeholder (``?`` for SQLite, ``%s`` for psycopg). ``principal``
    keeps the runs of that subject (the ``sub`` of the recorded principal)."""
    clauses, args = [], []
    if principal:
        sub = "json_extract(principal, '$.sub')" if mark == "?" else "(principal::jsonb->>'sub')"
        clauses.append(f"{sub} = {mark}")
        args.append(principal)
    if tool:
        clauses.append(f"tool = {mark}")
        args.append(tool)
    if status:
        clauses.append(f"status = {mark}")
        args.append(status)
    return (f"WHERE {' AND '.join(clauses)}" if clauses else ""), args


# Columns whose decoded value must have a given shape; anything else is a damaged row.
_NUMBERS = ("created_at", "started_at", "ended_at", "duration_ms", "timeout", "lease_expires")
_INTEGERS = {"resume_count": 0, "owner_pid": None, "background": 0}
_TEXTS = ("run_id", "tool", "status", "tool_digest", "input_hash", "owner", "owner_host")
_OBJECTS = ("error", "approval", "registry", "model_output", "display", "principal")


@functools.cache
def _statuses() -> frozenset[str]:
    from toolctl.runtime.result import RunStatus

    return frozenset(s.value for s in RunStatus)


def _shape_problems(data: dict[str, Any]) -> list[str]:
    """Repair (in place) the columns of ``data`` whose values have the wrong shape."""
    bad = []
    for name in _NUMBERS:
        value = data[name]
        if value is not None and (type(value) not in (int, float) or value != value):
            data[name] = 0.0 if name == "created_at" else None
            bad.append(name)
    for name, default in _INTEGERS.items():
        if data[name] is not None and type(data[name]) is not int:
            data[name] = default
            bad.append(name)
    for name in _TEXTS:
        if data[name] is not None and not isinstance(data[name], str):
            data[name] = str(data[name])
            bad.append(name)
    for name in _OBJECTS:
        if data[name] is not None and not isinstance(data[name], dict):
            data[name] = None
            bad.append(name)
    if data["status"] not in _statuses():  # unknown outcome: as for a run whose process died
        data["status"] = "interrupted"
        bad.append("status")
    notes = data["notes"]
    if notes is not None and not (
        isinstance(notes, list) and all(isinstance(n, str) for n in notes)
    ):
        data["notes"] = None
        bad.append("notes")
    return bad


def decode(columns: dict[str, Any]) -> RunRecord:
    """A row as a record. A damaged column (not JSON, or the wrong type) is shown empty and
    flagged, so one bad row never hides the others: its notes say which column, and its error
    is ``damaged_record`` unless it had a readable error of its own."""
    data = {name: columns[name] for name in FIELDS}
    if isinstance(data["background"], bool):  # PostgreSQL's boolean column
        data["background"] = int(data["background"])
    damaged = []
    for name in JSON_COLUMNS:
        if data[name] is not None:
            try:
                data[name] = json.loads(data[name])
            except (ValueError, TypeError):  # not JSON, or not text at all
                data[name] = None
                damaged.append(name)
    damaged += _shape_problems(data)
    notes = data["notes"] or []
    data["background"] = bool(data["background"])
    if damaged:
        what = f"damaged record: column(s) {', '.join(damaged)} unreadable, shown empty"
        if "status" in damaged:
            what += " (the status as interrupted)"
        notes = [*notes, what]
        if data["error"] is None:
            error = {"code": ErrorCode.DAMAGED_RECORD.value, "message": what, "details": []}
            data["error"] = error
    data["notes"] = notes
    return RunRecord(**data)
