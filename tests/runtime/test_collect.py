"""Collecting a finished run from the history (a background run above all): the caller gets
the same model output and display the foreground call returns; the raw output is not stored."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest

from toolctl.cli.app import run as cli
from toolctl.registry import Registry
from toolctl.runtime import RunStatus, api

pytestmark = pytest.mark.timeout(60)


def test_a_background_result_matches_the_foreground_one(reg: Registry) -> None:
    here = reg.call("weather_views", {"city": "Oslo"})
    started = reg.call("weather_views", {"city": "Oslo"}, background=True)
    assert started.status is RunStatus.RUNNING
    done = reg.wait(started.run_id, timeout=30)
    assert done.status is RunStatus.SUCCEEDED and done.error is None
    assert done.model_output == here.model_output
    assert done.model_output is not None and done.model_output["type"] == "content"
    assert done.display == here.display == {"input": {"city": "Oslo"}, "output": "Oslo: sunny"}
    assert done.transcript == here.transcript
    assert "radarImageUrl" not in done.transcript["output"]
    # output is the transcript form: the raw output (with the radar URL) is never stored
    assert done.output == done.transcript["output"]
    assert reg.get_run(started.run_id[:16]).model_output == here.model_output


def test_a_model_output_that_is_the_hidden_raw_output_is_not_stored(reg: Registry) -> None:
    here = reg.call("hidden_output", {})
    assert here.model_output is not None and here.model_output["value"]["debugScore"] == 0.97
    stored = reg.get_run(here.run_id)
    assert stored.model_output is None and "output" not in stored.display
    assert stored.transcript["output"] == {"displayName": "Acme"}
    store = api.resolve_store(reg)
    row = sqlite3.connect(store.path).execute("SELECT * FROM runs WHERE run_id = ?", (here.run_id,))
    assert "debugScore" not in json.dumps(row.fetchone())


def test_secrets_in_a_stored_model_output_are_redacted(reg: Registry) -> None:
    sent = {"msg": "postgres://u:pw123@db/prod", "api_key": "k-1"}
    here = reg.call("echo", sent)
    # The model never sees a secret value the run was given (here the api_key, by its name).
    shown = {"msg": "postgres://u:pw123@db/prod", "api_key": "[REDACTED]"}
    assert here.model_output == {"type": "json", "value": shown} and here.output == sent
    stored = reg.get_run(here.run_id).model_output
    assert stored is not None and stored["value"]["api_key"] == "[REDACTED]"
    assert "pw123" not in json.dumps(stored)


def test_runs_wait_and_show_give_the_model_output_and_display(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["run", "weather_views", "-i", '{"city": "Oslo"}', "--background"]) == 0
    run_id = capsys.readouterr().out.strip()
    assert cli(["runs", "wait", run_id, "--timeout", "30"]) == 0
    parts = json.loads(capsys.readouterr().out)
    assert parts[0] == {"type": "text", "text": "Oslo: 72F"} and parts[1]["type"] == "image-url"
    assert cli(["runs", "wait", run_id, "--display"]) == 0
    assert capsys.readouterr().out == "Oslo: sunny\n"
    assert cli(["runs", "show", run_id, "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert (
        shown["model_output"]["type"] == "content" and shown["display"]["output"] == "Oslo: sunny"
    )
    assert cli(["runs", "show", run_id]) == 0
    assert "model output:" in capsys.readouterr().out


def test_runs_wait_says_when_it_falls_back_to_the_transcript(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["run", "hidden_output", "--background"]) == 0
    run_id = capsys.readouterr().out.strip()
    assert cli(["runs", "wait", run_id, "--timeout", "30"]) == 0
    out, err = capsys.readouterr()
    assert json.loads(out) == {"displayName": "Acme"}
    assert "model output was not stored" in err


def test_a_version_1_history_is_upgraded_in_place(tmp_path: Path) -> None:
    from toolctl.runtime.history.sqlite import SCHEMA_VERSION, SqliteStore

    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.executescript(
        "CREATE TABLE runs (run_id TEXT PRIMARY KEY, tool TEXT NOT NULL, status TEXT NOT NULL,"
        " tool_digest TEXT NOT NULL, input_hash TEXT, input TEXT, output TEXT, error TEXT,"
        " suspend TEXT, resume TEXT, notes TEXT, raw_input TEXT, raw_context TEXT, approval TEXT,"
        " background INTEGER NOT NULL DEFAULT 0, timeout REAL, created_at REAL NOT NULL,"
        " started_at REAL, ended_at REAL, duration_ms REAL, owner TEXT, owner_pid INTEGER,"
        " owner_host TEXT, owner_start TEXT, lease_expires REAL,"
        " resume_count INTEGER NOT NULL DEFAULT 0, registry TEXT);"
        "INSERT INTO runs (run_id, tool, status, tool_digest, output, created_at)"
        " VALUES ('r1', 'echo', 'succeeded', 'd', '{\"a\": 1}', 1.0);"
        "PRAGMA user_version = 1;"
    )
    db.close()
    store = SqliteStore(path)
    old = store.get("r1")
    assert old.output == {"a": 1} and old.model_output is None and old.display is None
    assert old.binding is None and old.traceback is None and old.origin is None
    assert store._db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
