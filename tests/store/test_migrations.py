"""Histories written by an older toolctl open in place: the oldest schema of each store is
upgraded to the table a fresh store creates, and the runs already recorded still read."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from toolctl.runtime.history import codec as rowcodec
from toolctl.runtime.history.sqlite import SCHEMA_VERSION, SqliteStore

# The columns each store's first schema lacked (added by its migrations).
_SQLITE_V1_LACKS = (
    "model_output",
    "display",
    "binding",
    "traceback",
    "origin",
    "principal",
    "raw_resume",
)
_POSTGRES_V1_LACKS = ("binding", "traceback", "origin", "principal", "raw_resume")


def _first_schema(table: str, lacks: tuple[str, ...], *, postgres: bool = False) -> str:
    lines = rowcodec.create_table(table, postgres=postgres).splitlines()
    kept = [line for line in lines if line.split()[0] not in lacks]
    text = "\n".join(kept)
    return text.replace(",\n)", "\n)")


def _old_row() -> dict[str, object]:
    return {
        "run_id": "old1",
        "tool": "echo",
        "status": "succeeded",
        "tool_digest": "d",
        "created_at": 1.5,
        "output": '{"k": "v"}',
        "notes": "[]",
    }


def test_every_record_field_has_a_column() -> None:
    assert sorted(rowcodec.COLUMNS) == sorted(rowcodec.FIELDS)


def test_a_first_schema_sqlite_history_is_upgraded_in_place(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute(_first_schema("runs", _SQLITE_V1_LACKS))
    row = _old_row()
    db.execute(
        f"INSERT INTO runs ({','.join(row)}) VALUES ({','.join('?' * len(row))})",
        list(row.values()),
    )
    db.execute("PRAGMA user_version = 1")
    db.commit()
    db.close()

    store = SqliteStore(path)
    try:
        rec = store.get("old1")
        assert (rec.output, rec.notes, rec.binding, rec.origin) == ({"k": "v"}, [], None, None)
        assert rec.principal is None  # no principal recorded: never an OAuth caller's run
        assert store.update("old1", expect_status="succeeded", traceback="t", display={"a": 1})
        assert store.get("old1").traceback == "t"
    finally:
        store.close()
    db = sqlite3.connect(path)
    columns = [r[1] for r in db.execute("PRAGMA table_info(runs)")]
    version = db.execute("PRAGMA user_version").fetchone()[0]
    db.close()
    assert sorted(columns) == sorted(rowcodec.COLUMNS)
    assert version == SCHEMA_VERSION


def test_a_first_schema_postgres_history_is_upgraded_in_place(pg_url: str) -> None:
    import psycopg

    from toolctl.runtime.history.postgres import SCHEMA_VERSION, PostgresStore

    row = _old_row()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("CREATE TABLE toolctl_schema (version INTEGER NOT NULL)")
        conn.execute("INSERT INTO toolctl_schema VALUES (1)")
        conn.execute(_first_schema("toolctl_runs", _POSTGRES_V1_LACKS, postgres=True))
        conn.execute(
            f"INSERT INTO toolctl_runs ({','.join(row)}) VALUES ({','.join(['%s'] * len(row))})",
            list(row.values()),
        )

    store = PostgresStore(pg_url)
    try:
        rec = store.get("old1")
        assert (rec.output, rec.notes, rec.binding) == ({"k": "v"}, [], None)
        assert store.update("old1", expect_status="succeeded", traceback="t")
        assert store.get("old1").traceback == "t"
        assert len(store.binding_key()) == 32  # the keys table came with the upgrade
    finally:
        store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        columns = conn.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_name = 'toolctl_runs'"
        ).fetchall()
        version = conn.execute("SELECT max(version) FROM toolctl_schema").fetchone()
    assert sorted(c[0] for c in columns) == sorted(rowcodec.COLUMNS)
    assert version == (SCHEMA_VERSION,)
