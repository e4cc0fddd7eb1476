"""The PostgreSQL store's run writes as prepared statements (toolctl.runtime.history.pgprepared):
what
is sent, and that a write still lands or fails clearly when the session lost its statements or
a value cannot be stored."""

from __future__ import annotations

import time

import psycopg
import pytest

from toolctl.runtime.errors import StateError
from toolctl.runtime.history import codec as rowcodec
from toolctl.runtime.history import pgprepared
from toolctl.runtime.history.postgres import PostgresStore
from toolctl.runtime.history.records import RunRecord


def test_placeholders_are_numbered_in_order() -> None:
    sql = "UPDATE t SET a = %s, b = %s WHERE run_id = %s AND status = ANY(%s)"
    assert pgprepared.numbered(sql) == (
        "UPDATE t SET a = $1, b = $2 WHERE run_id = $3 AND status = ANY($4)"
    )
    with pytest.raises(ValueError, match="not a plain"):
        pgprepared.numbered("SELECT '100%' WHERE a = %s")


def test_parameters_are_sent_in_postgresql_text_form() -> None:
    assert pgprepared.text_param(None) is None
    assert pgprepared.text_param("héllo") == "héllo".encode()
    assert pgprepared.text_param(True) == b"t" and pgprepared.text_param(False) == b"f"
    assert pgprepared.text_param(42) == b"42"
    assert pgprepared.text_param(0.1) == b"0.1"  # repr: the shortest text that reads back
    assert pgprepared.text_param(["running", 'a"b\\c']) == b'{"running","a\\"b\\\\c"}'
    with pytest.raises(psycopg.DataError, match="NUL"):
        pgprepared.text_param("a\x00b")
    with pytest.raises(TypeError, match="dict"):
        pgprepared.text_param({"a": 1})


def _record(run_id: str, **fields: object) -> RunRecord:
    now = time.time()
    values: dict[str, object] = {
        "run_id": run_id,
        "tool": "t",
        "status": "running",
        "tool_digest": "d",
        "created_at": now,
        "input": {"q": "ä"},
        "timeout": 1.5,
        "background": True,
        **fields,
    }
    return RunRecord(**values)  # type: ignore[arg-type]


@pytest.mark.requires("postgres")
def test_a_write_survives_its_session_losing_the_prepared_statements(pg_url: str) -> None:
    store = PostgresStore(pg_url, max_size=1)  # one connection: the same session throughout
    try:
        store.insert(_record("r1"))
        store._run("DEALLOCATE ALL", durable=False)  # as a pooler's new server session would
        store.insert(_record("r2"))
        assert store.update("r2", expect_status="running", status="succeeded", output=[1, "x"])
        store._run("DEALLOCATE ALL", durable=False)
        assert store.update("r1", expect_status=("running",), status="failed")
        assert not store.update("r1", expect_status="running", status="succeeded")  # CAS lost
        got = store.get("r2")
        assert (got.status, got.output, got.input, got.timeout, got.background) == (
            "succeeded",
            [1, "x"],
            {"q": "ä"},
            1.5,
            True,
        )
        assert store.get("r1").status == "failed"
    finally:
        store.close()


@pytest.mark.requires("postgres")
def test_a_value_postgresql_cannot_hold_is_a_clear_error_and_nothing_is_written(
    pg_url: str,
) -> None:
    store = PostgresStore(pg_url)
    try:
        with pytest.raises(StateError, match="cannot contain NUL") as caught:
            store.insert(_record("r1", traceback="bad\x00byte"))
        assert "s3cret" not in str(caught.value)
        with pytest.raises(StateError, match="duplicate key"):
            store.insert(_record("r2"))
            store.insert(_record("r2"))
        assert [r.run_id for r in store.query()] == ["r2"]
    finally:
        store.close()


def test_a_row_encodes_each_object_once_and_reads_back_the_same() -> None:
    shown_in, shown_out = {"q": "x"}, {"sum": 3, "s": "ü"}
    rec = _record(
        "r",
        status="succeeded",
        input=shown_in,
        output=shown_out,
        display={"input": shown_in, "output": shown_out},
        model_output={"type": "json", "value": shown_out},
        notes=[],
    )
    made: dict[int, str] = {}
    values = rowcodec.record_values(rec, made=made)
    assert {id(shown_in), id(shown_out)} <= set(made)  # encoded whole, once each
    # the display view and the model output were written around those texts, not encoded
    assert id(rec.display) not in made and id(rec.model_output) not in made
    columns = dict(zip(rowcodec.FIELDS, values, strict=True))
    assert columns["display"] == '{"input":{"q":"x"},"output":{"sum":3,"s":"ü"}}'
    back = rowcodec.decode(columns)
    assert (back.display, back.model_output, back.output, back.notes) == (
        rec.display,
        rec.model_output,
        rec.output,
        [],
    )


def test_the_status_numbers_written_out_are_libpqs() -> None:
    """pgprepared spells libpq's status numbers as literals (psycopg is imported only when a
    PostgreSQL history is used); a psycopg that renumbered them would turn a failed write in a
    batch into one reported written."""
    from psycopg import pq

    assert pgprepared.TUPLES_OK == pq.ExecStatus.TUPLES_OK
    assert pgprepared.COMMAND_OK == pq.ExecStatus.COMMAND_OK
    assert pgprepared.FATAL_ERROR == pq.ExecStatus.FATAL_ERROR
    assert pgprepared.IN_ERROR == pq.TransactionStatus.INERROR
