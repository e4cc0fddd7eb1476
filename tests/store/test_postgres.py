"""What only the PostgreSQL store has: URLs and their passwords, set-up by many processes at once,
claims across processes, and whole runs through the API and the CLI."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import threading
import time
from pathlib import Path

import pytest
from bench import pgcluster

from tests.store.procs import SRC, toolctl
from toolctl.runtime.errors import StateError
from toolctl.runtime.history.postgres import PostgresStore, display_url
from toolctl.runtime.history.records import RunRecord

ROOT = str(Path(__file__).resolve().parents[2])


def test_display_url_masks_the_password() -> None:
    assert display_url("postgresql://u:pw@h:5/db") == "postgresql://u:***@h:5/db"
    assert display_url("postgresql://u@h/db?password=pw&sslmode=x") == (
        "postgresql://u@h/db?password=***&sslmode=x"
    )


@pytest.mark.requires("postgres")
def test_a_failing_cluster_command_says_why(tmp_path: Path) -> None:
    bindir = pgcluster.binaries()
    assert bindir is not None
    (tmp_path / "data").write_text("a file where initdb wants a directory")
    with pytest.raises(RuntimeError, match=r"initdb failed \(exit 1\): initdb: error: .*data"):
        pgcluster._run([str(bindir / "initdb"), "-D", str(tmp_path / "data")])


def test_a_wrong_password_never_shows_it(pg: pgcluster.Cluster) -> None:
    url = f"postgresql://{pg.user}:wrong-{pgcluster.PASSWORD}@127.0.0.1:{pg.port}/postgres"
    with pytest.raises(StateError) as info:
        PostgresStore(url, connect_timeout=5)
    text = f"{info.value} {info.value.hint}"
    assert "wrong-" not in text and pgcluster.PASSWORD not in text
    assert "***" in text and "password authentication failed" in text


def test_an_unreachable_server_is_a_clear_error(pg: pgcluster.Cluster) -> None:
    with pytest.raises(StateError, match="cannot connect to run history") as info:
        PostgresStore(f"postgresql://u:{pgcluster.PASSWORD}@127.0.0.1:1/db", connect_timeout=2)
    assert pgcluster.PASSWORD not in str(info.value)


def test_a_newer_schema_is_refused(pg_url: str) -> None:
    PostgresStore(pg_url).close()
    import psycopg

    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE toolctl_schema SET version = 99")
    with pytest.raises(StateError, match="schema version 99"):
        PostgresStore(pg_url)


def test_many_stores_set_up_one_database_at_once(pg_url: str) -> None:
    errors: list[BaseException] = []
    stores: list[PostgresStore] = []
    start = threading.Barrier(6)

    def open_one() -> None:
        start.wait()
        try:
            stores.append(PostgresStore(pg_url, max_size=2))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=open_one) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    for store in stores:
        store.close()


CLAIMER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {src!r})
    from toolctl.runtime.history.postgres import PostgresStore
    store = PostgresStore(sys.argv[1], sweep=False, max_size=1)
    won = [rid for rid in sys.argv[3:]
           if store.update(rid, expect_status="awaiting_approval", durable=True,
                           status="running", owner=sys.argv[2])]
    print(",".join(won))
    store.close()
""")


def test_each_claim_is_won_by_exactly_one_process(pg_url: str, tmp_path: Path) -> None:
    store = PostgresStore(pg_url)
    ids = [f"run{i}" for i in range(40)]
    for rid in ids:
        store.insert(
            RunRecord(
                run_id=rid,
                tool="t",
                status="awaiting_approval",
                tool_digest="d",
                created_at=time.time(),
            ),
            durable=True,
        )
    script = tmp_path / "claim.py"
    script.write_text(CLAIMER.format(src=SRC))
    procs = [
        subprocess.Popen(
            [sys.executable, str(script), pg_url, f"p{i}", *ids],
            stdout=subprocess.PIPE,
            text=True,
        )
        for i in range(4)
    ]
    won = [rid for p in procs for rid in p.communicate(timeout=60)[0].strip().split(",") if rid]
    assert sorted(won) == sorted(ids)  # every run claimed, none twice
    owners = {r.run_id: r.owner for r in store.query(limit=100)}
    assert all(owners[rid] and owners[rid].startswith("p") for rid in ids)
    store.close()


PROJECT = {
    "toolctl.yaml": "tools: tools.d\npythonPath: [.]\n",
    "handlers.py": "def shout(input):\n    return {'text': input['text'].upper()}\n",
    "tools.d/shout.yaml": textwrap.dedent("""
        toolctl: 1
        name: shout
        description: Upper-case the text.
        handler: handlers:shout
        requireApproval: true
        inputSchema:
          type: object
          properties: {text: {type: string}}
          required: [text]
    """),
}


def _project(tmp_path: Path) -> Path:
    for name, text in PROJECT.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return tmp_path


def test_a_pending_run_is_continued_by_another_process(pg_url: str, tmp_path: Path) -> None:
    root = _project(tmp_path)
    started = toolctl(
        root, pg_url, "run", "shout", "--input", '{"text": "hi"}', "--format", "json", expect=4
    )
    import json

    run_id = json.loads(started.stdout)["run_id"]
    assert not (root / ".toolctl" / "state.db").exists()  # nothing went to SQLite
    approved = toolctl(root, pg_url, "approve", run_id, "--format", "json")
    assert json.loads(approved.stdout)["output"] == {"text": "HI"}
    listed = toolctl(root, pg_url, "runs", "list", "--format", "json")
    assert [r["status"] for r in json.loads(listed.stdout)] == ["succeeded"]
    toolctl(root, pg_url, "approve", run_id, expect=1)  # once only


def test_the_state_key_from_the_environment_binds_approvals(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLCTL_STATE_KEY", "cd" * 32)
    store = PostgresStore(pg_url)
    try:
        assert store.binding_key() == bytes.fromhex("cd" * 32)
    finally:
        store.close()
    monkeypatch.setenv("TOOLCTL_STATE_KEY", "short")
    store = PostgresStore(pg_url)
    try:
        with pytest.raises(StateError, match="TOOLCTL_STATE_KEY is not a usable key"):
            store.binding_key()
    finally:
        store.close()
