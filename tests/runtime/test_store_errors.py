"""A run history that cannot be used is a clear error naming the file and what to do (never an
internal error, never "move it away" when that would discard runs); one bad row hides nothing."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.foundation.conftest import run_toolctl
from toolctl.registry import Registry
from toolctl.runtime import StateError
from toolctl.runtime.history.sqlite import RunRecord, SqliteStore

from .conftest import FIXTURES


def _record(run_id: str, created_at: float | None = None, output: object = None) -> RunRecord:
    when = created_at or time.time()
    return RunRecord(run_id, "echo", "succeeded", "d", when, output=output or {"x": 1})


def _history(path: Path, count: int = 3) -> None:
    store = SqliteStore(path)
    for i in range(count):
        store.insert(_record(f"r{i}", created_at=time.time() + i))
    store.close()


def _toolctl(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_toolctl(*args, cwd=project, env={"PYTHONPATH": str(FIXTURES)})


def _never_discard(message: str) -> None:
    assert "move it away" not in message and "delete" not in message


def test_corrupted_pages_are_a_clear_error_in_sweep(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    _history(path, 40)
    data = bytearray(path.read_bytes())
    page = 4096
    data[page:] = b"\xab" * (len(data) - page)  # every page after the schema's
    path.write_bytes(bytes(data))
    with pytest.raises(StateError) as info:
        SqliteStore(path)  # the start-up sweep reads the damaged pages
    text = str(info.value)
    assert str(path) in text and "is damaged" in text and ".recover" in text
    _never_discard(text)


def test_one_row_with_malformed_json_is_flagged_and_the_others_listed(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    _history(path)
    db = sqlite3.connect(path)
    db.execute("UPDATE runs SET output = '{bad' WHERE run_id = 'r1'")
    db.execute("UPDATE runs SET tool = CAST(x'ff00fe' AS TEXT) WHERE run_id = 'r2'")
    db.commit()
    db.close()
    store = SqliteStore(path)
    runs = {r.run_id: r for r in store.query()}
    assert sorted(runs) == ["r0", "r1", "r2"]
    assert runs["r1"].output is None and runs["r1"].error["code"] == "damaged_record"
    assert "damaged record: column(s) output unreadable" in runs["r1"].notes[-1]
    assert runs["r0"].output == {"x": 1} and runs["r0"].error is None
    assert runs["r2"].tool.startswith("\ufffd")  # not UTF-8: replaced, not fatal
    assert store.get("r1").error["code"] == "damaged_record"


@pytest.mark.parametrize(
    ("sql", "columns"),
    [
        ("created_at = 'abc', duration_ms = 'x', resume_count = 'q'", "created_at, duration_ms"),
        ("error = '[1, 2]', notes = '{\"a\": 1}'", "error, notes"),
        ("status = 'bogus'", "status unreadable, shown empty (the status as interrupted)"),
    ],
)
def test_a_row_with_wrong_types_is_flagged(tmp_path: Path, sql: str, columns: str) -> None:
    path = tmp_path / "s.db"
    _history(path)
    db = sqlite3.connect(path)
    db.execute(f"UPDATE runs SET {sql} WHERE run_id = 'r1'")
    db.commit()
    db.close()
    store = SqliteStore(path)
    runs = {r.run_id: r for r in store.query()}
    assert sorted(runs) == ["r0", "r1", "r2"]
    bad = runs["r1"]
    assert bad.error is not None and bad.error["code"] == "damaged_record"
    assert columns in bad.notes[-1]
    assert isinstance(bad.created_at, float) and bad.status in ("succeeded", "interrupted")


def test_cli_lists_around_a_damaged_row(project: Path, reg: Registry) -> None:
    for i in range(3):
        reg.call("echo", {"msg": f"m{i}"})
    state = reg.project.state_path  # type: ignore[union-attr]
    db = sqlite3.connect(state)
    db.execute("UPDATE runs SET input = 'not json' WHERE rowid = 2")
    db.commit()
    db.close()
    result = _toolctl(project, "runs", "list")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()[1:]
    assert len(lines) == 3 and sum("damaged_record" in line for line in lines) == 1


def test_user_version_without_its_table_is_repaired(project: Path, reg: Registry) -> None:
    reg.call("echo", {"msg": "first"})
    state = reg.project.state_path  # type: ignore[union-attr]
    db = sqlite3.connect(state)
    db.execute("DROP TABLE runs")
    db.commit()
    db.close()
    for args in (("runs", "list"), ("run", "echo", "-i", '{"msg": "again"}'), ("runs", "list")):
        result = _toolctl(project, *args)
        assert result.returncode == 0, result.stderr
    assert "echo" in result.stdout


@contextlib.contextmanager
def _read_only(path: Path) -> Iterator[None]:
    """The file made unwritable for this process: immutable for root, mode 0400 otherwise."""
    if os.geteuid() == 0:
        if subprocess.run(["chattr", "+i", str(path)], check=False).returncode != 0:
            pytest.skip("chattr +i is not available here (needed as root)")
        try:
            yield
        finally:
            subprocess.run(["chattr", "-i", str(path)], check=True)
    else:
        path.chmod(0o400)
        yield


def test_read_only_history_on_run_stops_before_the_tool(
    project: Path, reg: Registry, events: list
) -> None:
    reg.call("echo", {"msg": "first"})
    state = reg.project.state_path  # type: ignore[union-attr]
    for side in ("-wal", "-shm"):
        Path(f"{state}{side}").unlink(missing_ok=True)
    with _read_only(state):
        result = _toolctl(project, "run", "echo", "-i", '{"msg": "second"}')
    assert result.returncode == 1, result.stderr
    assert "internal error" not in result.stderr
    assert f"run history {state} is read-only" in result.stderr
    assert "point `state:` at a writable file" in result.stderr
    assert '"second"' not in result.stdout  # the tool did not run


def test_full_disk_says_how_to_free_space(tmp_path: Path) -> None:
    path = tmp_path / "s.db"
    store = SqliteStore(path)
    store.insert(_record("small"))
    pages = store._db.execute("PRAGMA page_count").fetchone()[0]
    store._db.execute(f"PRAGMA max_page_count = {pages + 2}")  # a disk with a little room
    with pytest.raises(StateError) as info:
        for i in range(50):
            store.insert(_record(f"big{i}", output={"blob": "x" * 20_000}))
    text = str(info.value)
    assert f"run history {path} cannot grow: the disk is full" in text
    assert "free space" in text and "point `state:`" in text
    _never_discard(text)
    store._db.execute("PRAGMA max_page_count = 1073741823")
    assert "small" in {r.run_id for r in store.query(limit=100)}  # the history is intact


def test_disk_io_error_hint_keeps_the_history() -> None:
    from toolctl.runtime.history.sqlite import state_error

    exc = sqlite3.OperationalError("disk I/O error")
    exc.sqlite_errorname = "SQLITE_IOERR_WRITE"  # type: ignore[attr-defined]
    error = state_error(Path("/srv/state.db"), exc, "writing a run")
    text = str(error)
    assert "run history /srv/state.db could not be read or written (disk I/O error)" in text
    assert "df /srv" in text and "point `state:`" in text
    _never_discard(text)
