"""Several ``toolctl serve`` replicas and workers on one PostgreSQL history: health endpoints,
graceful shutdown, and a load spread over three replicas while a replica and a worker are killed.

The referee is the run history itself and a marker file per handler execution: afterwards every
call was answered or failed visibly, every run a client saw is recorded, approved runs ran
exactly once, and background runs ended ``succeeded`` or ``interrupted`` (or were re-run once,
with a note, for an idempotent tool).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from bench import pgcluster

from tests.store.fleet import call_tool, make_project, replica
from tests.store.procs import worker
from toolctl.runtime.history.postgres import PostgresStore

pytest.importorskip("mcp")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj")


def _get(url: str) -> tuple[int, str]:
    try:
        with urllib.request.urlopen(url, timeout=10) as response:
            return response.status, response.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_health_and_readiness(project: Path, pg: pgcluster.Cluster) -> None:
    url = pg.create_database("health")
    with replica(project, url) as server:
        base = server.url.rsplit("/", 1)[0]
        assert _get(base + "/healthz") == (200, "ok\n")
        assert _get(base + "/readyz") == (200, "ready\n")
        import psycopg

        with psycopg.connect(pg.url, autocommit=True) as conn:
            conn.execute('DROP DATABASE "health" WITH (FORCE)')
        status, body = _get(base + "/readyz")
        assert (status, body) == (503, "not ready\n")
        assert _get(base + "/healthz") == (200, "ok\n")


def test_sigterm_lets_a_call_in_flight_finish(project: Path, pg: pgcluster.Cluster) -> None:
    url = pg.create_database("graceful")
    with replica(project, url, "--shutdown-timeout", "20") as server:

        async def scenario() -> dict[str, Any]:
            call = asyncio.create_task(call_tool(server.url, "quick", {"id": "g1", "seconds": 1.5}))
            while not (project / "marks" / "g1").exists():
                await asyncio.sleep(0.05)
            server.proc.send_signal(signal.SIGTERM)
            return await call

        answer = asyncio.run(scenario())
        assert answer["is_error"] is False and answer["status"] == "succeeded"
        assert server.proc.wait(30) == 0


def test_three_replicas_two_workers_one_of_each_killed(
    project: Path, pg: pgcluster.Cluster
) -> None:
    url = pg.create_database("fleet")
    plan = [
        (tool, f"{tool}-{i}") for i in range(8) for tool in ("quick", "guarded", "chore", "redo")
    ]
    outcomes: dict[str, Any] = {}
    with contextlib.ExitStack() as stack:
        servers = [stack.enter_context(replica(project, url)) for _ in range(3)]
        workers = [stack.enter_context(worker(project, url)) for _ in range(2)]

        async def load() -> None:
            gate = asyncio.Semaphore(6)

            async def one(index: int, tool: str, run: str) -> None:
                if index == len(plan) // 3:
                    os.killpg(servers[1].proc.pid, signal.SIGKILL)
                    os.killpg(workers[0].pid, signal.SIGKILL)
                seconds = 0.6 if tool in ("chore", "redo") else 0.05
                async with gate:
                    target = servers[index % 3].url
                    try:
                        args = {"id": run, "seconds": seconds}
                        outcomes[run] = await call_tool(target, tool, args)
                    except Exception as exc:  # the killed replica: a visible failure
                        outcomes[run] = {"failed": type(exc).__name__}

            await asyncio.gather(*(one(i, tool, run) for i, (tool, run) in enumerate(plan)))

        asyncio.run(load())
        assert sorted(outcomes) == sorted(run for _, run in plan)  # every call came back
        failed = [run for run, outcome in outcomes.items() if "failed" in outcome]
        assert failed, "the killed replica should have failed some calls visibly"
        assert len(failed) < len(plan) // 2
        store = PostgresStore(url)
        try:
            _settle(store)
            rows = {r.run_id: r for r in store.query(limit=1000)}
        finally:
            store.close()
    for tool, run in plan:
        outcome = outcomes[run]
        marks = project / "marks" / run
        executions = len(marks.read_text().split()) if marks.exists() else 0
        if "failed" in outcome:
            assert executions <= 1 if tool != "redo" else executions <= 2
            continue
        assert outcome["run"] in rows, f"{run}: the client saw run {outcome['run']}, not stored"
        row = rows[outcome["run"]]
        if tool == "redo":
            assert row.status == "succeeded"
            assert executions == 1 or any("re-queued" in n for n in row.notes)
        elif tool == "chore":
            assert row.status in ("succeeded", "interrupted")
            assert executions <= 1
        else:
            assert row.status == "succeeded" and executions == 1, (run, row.status, executions)
    assert all(r.status != "running" for r in rows.values())


def _settle(store: PostgresStore, timeout: float = 60.0) -> None:
    """Wait until no run is ``running`` (a lost worker's runs are swept when its lease ends)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        store.sweep()
        if not store.query(status="running", limit=1):
            return
        time.sleep(0.5)
    raise AssertionError(
        "runs still running: " + json.dumps([r.run_id for r in store.query(status="running")])
    )


def test_an_approval_asked_by_one_replica_is_answered_on_another(
    project: Path, pg: pgcluster.Cluster
) -> None:
    """Protocol 2026-07-28: the input-required round trip carries its state, so the follow-up
    can go to any replica on the same PostgreSQL history; the run executes once."""
    from mcp.client import Client
    from mcp_types import ElicitResult, InputRequiredResult

    url = pg.create_database("roundtrip")

    async def accept(context: Any, params: Any) -> Any:
        return ElicitResult(action="accept", content={})

    async def scenario(first_url: str, second_url: str) -> Any:
        async with Client(first_url, elicitation_callback=accept) as c:
            asked = await c.session.call_tool("guarded", {"id": "rt1"}, allow_input_required=True)
        assert isinstance(asked, InputRequiredResult)
        assert not (project / "marks" / "rt1").exists()  # nothing ran before the answer
        async with Client(second_url, elicitation_callback=accept) as c:
            await c.list_tools()
            return await c.session.call_tool(
                "guarded",
                {"id": "rt1"},
                input_responses={"approval": ElicitResult(action="accept", content={})},
                request_state=asked.request_state,
            )

    with replica(project, url) as one, replica(project, url) as two:
        result = asyncio.run(scenario(one.url, two.url))
    assert result.is_error is False, result
    assert result.structured_content == {"id": "rt1"}
    assert (project / "marks" / "rt1").read_text().count("\n") == 1
    store = PostgresStore(url)
    try:
        (row,) = store.query(tool="guarded")
        assert row.status == "succeeded" and row.raw_input is None
    finally:
        store.close()
