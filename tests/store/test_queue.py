"""Background runs on the PostgreSQL task queue, executed by ``toolctl worker`` processes: results,
cancellation from another process, and workers killed mid-run (interrupted, or re-queued for an
idempotent tool), with every execution of a handler counted."""

from __future__ import annotations

import json
import os
import subprocess
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.store.procs import kill, start_worker, toolctl
from toolctl.runtime.history.postgres import PostgresStore

HANDLERS = textwrap.dedent("""
    import os, time

    def _mark(input):
        with open(os.path.join(os.environ["MARKS"], input["id"]), "a") as fh:
            fh.write(f"{os.getpid()}\\n")

    def work(input, ctx):
        _mark(input)
        deadline = time.monotonic() + input.get("seconds", 0)
        while time.monotonic() < deadline:
            if ctx.abort.wait(0.05):
                return {"done": False}
        return {"done": True, "id": input["id"]}
""")

TOOL = """
toolctl: 1
name: {name}
description: Work for a while in the background.
handler: handlers:work
background: true
{extra}
inputSchema:
  type: object
  properties: {{id: {{type: string}}, seconds: {{type: number}}}}
  required: [id]
"""


@pytest.fixture
def project(tmp_path: Path, pg_url: str) -> Iterator[Path]:
    root = tmp_path / "proj"
    (root / "tools.d").mkdir(parents=True)
    (root / "marks").mkdir()
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [.]\n")
    (root / "handlers.py").write_text(HANDLERS)
    (root / "tools.d" / "work.yaml").write_text(TOOL.format(name="work", extra=""))
    (root / "tools.d" / "redo.yaml").write_text(
        TOOL.format(name="redo", extra="mcp:\n  annotations: {idempotentHint: true}")
    )
    yield root


def start(root: Path, url: str, tool: str, run: str, seconds: float) -> str:
    out = toolctl(
        root,
        url,
        "run",
        tool,
        "--input",
        json.dumps({"id": run, "seconds": seconds}),
        "--format",
        "json",
    )
    started = json.loads(out.stdout)
    assert started["status"] == "running"
    return str(started["run_id"])


@pytest.fixture
def workers() -> Iterator[list[subprocess.Popen[bytes]]]:
    """The worker processes a test started; killed at the end."""
    procs: list[subprocess.Popen[bytes]] = []
    yield procs
    for proc in procs:
        kill(proc)


def spawn_worker(
    project: Path, url: str, procs: list[subprocess.Popen[bytes]]
) -> subprocess.Popen[bytes]:
    proc = start_worker(project, url)
    procs.append(proc)
    return proc


def status_of(url: str, run_id: str) -> str:
    store = PostgresStore(url, sweep=False, max_size=1)
    try:
        return store.get(run_id).status
    finally:
        store.close()


def wait_for(predicate: object, what: str, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():  # type: ignore[operator]
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def executions(project: Path, run: str) -> int:
    marks = project / "marks" / run
    return len(marks.read_text().split()) if marks.exists() else 0


def test_a_worker_runs_queued_runs_and_any_process_collects_them(
    project: Path, pg_url: str, workers: list[subprocess.Popen[bytes]]
) -> None:
    ids = [start(project, pg_url, "work", f"a{i}", 0.2) for i in range(3)]
    spawn_worker(project, pg_url, workers)  # the runs waited in the queue for a worker
    for run_id, run in zip(ids, ["a0", "a1", "a2"], strict=True):
        shown = json.loads(
            toolctl(project, pg_url, "runs", "wait", run_id, "--format", "json").stdout
        )
        assert shown["status"] == "succeeded"
        assert shown["output"] == {"done": True, "id": run}
        assert executions(project, run) == 1


def test_a_run_cancelled_elsewhere_is_aborted_on_its_worker(
    project: Path, pg_url: str, workers: list[subprocess.Popen[bytes]]
) -> None:
    worker = spawn_worker(project, pg_url, workers)
    run_id = start(project, pg_url, "work", "c1", 60)
    wait_for(lambda: executions(project, "c1") == 1, "the handler to start")
    cancelled = toolctl(project, pg_url, "runs", "cancel", run_id)
    assert status_of(pg_url, run_id) == "cancelled"
    # The heartbeat (every lease / 3) aborts the handler, whose final write loses to the cancel.
    wait_for(lambda: _worker_idle(pg_url), "the worker to finish the aborted job")
    assert status_of(pg_url, run_id) == "cancelled"
    assert executions(project, "c1") == 1
    # Cancelling one run (here from the worker's own host) never signals the worker process,
    # which runs other jobs: it stays up and takes the next run.
    assert "SIGTERM" not in cancelled.stdout
    next_id = start(project, pg_url, "work", "c2", 0)
    assert worker.poll() is None
    waited = toolctl(
        project, pg_url, "runs", "wait", next_id, "--timeout", "30", "--format", "json"
    )
    assert json.loads(waited.stdout)["status"] == "succeeded"


def _worker_idle(url: str) -> bool:
    import psycopg

    with psycopg.connect(url) as conn:
        row = conn.execute(
            "SELECT count(*) FROM procrastinate_jobs WHERE status = 'doing'"
        ).fetchone()
    return row is not None and row[0] == 0


@pytest.mark.parametrize(("tool", "expected"), [("work", "interrupted"), ("redo", "succeeded")])
def test_a_worker_killed_mid_run(
    project: Path,
    pg_url: str,
    workers: list[subprocess.Popen[bytes]],
    tool: str,
    expected: str,
) -> None:
    first = spawn_worker(project, pg_url, workers)
    run_id = start(project, pg_url, tool, "k1", 3)
    wait_for(lambda: executions(project, "k1") == 1, "the handler to start")
    kill(first)
    spawn_worker(project, pg_url, workers)  # its sweep finds the lost run once the lease ends
    code = 0 if expected == "succeeded" else 1
    shown = json.loads(
        toolctl(project, pg_url, "runs", "wait", run_id, "--format", "json", expect=code).stdout
    )
    assert shown["status"] == expected
    if expected == "interrupted":
        assert executions(project, "k1") == 1  # never re-run
    else:
        assert executions(project, "k1") == 2  # re-run once, and said so
        assert any("re-queued as attempt 2" in note for note in shown["notes"])


def test_worker_registry_names_a_project_as_every_command_does(tmp_path: Path) -> None:
    # `toolctl worker -r ROOT` loads ROOT's configured tools (not ROOT itself as a tools path).
    from toolctl.worker.queued import registry_override

    (tmp_path / "toolctl.yaml").write_text("tools: [defs]\n")
    (tmp_path / "defs").mkdir()
    locator = registry_override(tmp_path)
    root = os.path.realpath(tmp_path)
    assert locator == {"root": root, "tools": [os.path.join(root, "defs")]}
    assert registry_override(tmp_path / "defs")["tools"] == [os.path.join(root, "defs")]


def test_a_requeued_run_is_not_requeued_again_by_the_next_sweep(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Between re-queueing a lost run and the job reaching the queue, the run must already look
    # queued: another worker's sweep in that gap would re-queue it a second time.
    from toolctl.runtime.history import queue
    from toolctl.runtime.history.ownership import owner_fields
    from toolctl.runtime.history.records import RunRecord

    deferred: list[str] = []
    monkeypatch.setattr(queue, "enqueue", lambda store, run_id, *_: deferred.append(run_id))
    store = PostgresStore(pg_url, sweep=False)
    try:
        lost = {**owner_fields("w1", 1.0), "owner_host": "gone-host", "lease_expires": 1.0}
        rec = RunRecord(
            run_id="r1", tool="redo", status="running", tool_digest="d", created_at=time.time()
        )
        for key, value in {**lost, "background": True, "registry": {"idempotent": True}}.items():
            setattr(rec, key, value)
        store.insert(rec)
        assert store.sweep() == ["r1"]
        assert store.sweep() == []
        assert deferred == ["r1"]
        got = store.get("r1")
        assert (got.status, got.registry) == ("running", {"idempotent": True, "attempt": 2})
    finally:
        store.close()
