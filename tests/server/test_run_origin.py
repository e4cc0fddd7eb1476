"""Runs started outside MCP are never an MCP client's (issue 20, class 7).

Every run records the front end that started it (``origin``). ``tasks/list`` lists only runs
started over MCP; ``tasks/get``, ``tasks/result``, ``tasks/update`` and ``tasks/cancel`` treat
any other run (the CLI's, the Python API's, ``toolctl test``'s, or a row from before origins
were recorded) as one that does not exist, and leave it untouched. The handlers are driven in
process; no server is started.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

import toolctl
from toolctl.cli.app import run as cli
from toolctl.registry import Registry
from toolctl.runtime.api import resolve_store
from toolctl.runtime.history import binding
from toolctl.runtime.history.records import Origin, RunRecord
from toolctl.server.tasks import ListParams, TaskParams, Tasks
from toolctl.server.toolset import Selection, build_toolset
from toolctl.server.visibility import visible_over_mcp

OLD = "2025-11-25"
OTHERS = [Origin.CLI, Origin.API, Origin.TEST, None]  # None: a row from an older toolctl


@pytest.fixture
def registry(registry_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    monkeypatch.chdir(registry_dir)
    monkeypatch.syspath_prepend(str(registry_dir))
    return toolctl.load(project=registry_dir, packs=False)


@pytest.fixture
def tasks(registry: Registry) -> Tasks:
    toolset = build_toolset(registry, Selection())
    return Tasks(lambda: toolset)


def _plant(registry: Registry, origin: str | None, status: str = "awaiting_approval") -> str:
    """A background run of ``chores`` in the history, started by ``origin``."""
    run_id = f"run-{origin or 'unknown'}"
    resolve_store(registry).insert(
        RunRecord(
            run_id=run_id,
            tool="chores",
            status=status,
            tool_digest=registry.get("chores").digest,
            created_at=time.time(),
            background=True,
            origin=origin,
        )
    )
    return run_id


def _ask(handler: Callable[..., Any], params: Any) -> Any:
    return anyio.run(handler, SimpleNamespace(protocol_version=OLD), params)


def test_tasks_list_shows_only_runs_started_over_mcp(registry: Registry, tasks: Tasks) -> None:
    for origin in OTHERS:
        _plant(registry, origin)
    mine = _plant(registry, Origin.MCP)
    listed = _ask(tasks.list, ListParams())["tasks"]
    assert [t["taskId"] for t in listed] == [mine]


@pytest.mark.parametrize("origin", OTHERS)
@pytest.mark.parametrize("method", ["get", "result", "update", "cancel"])
def test_a_run_started_elsewhere_is_not_found_over_mcp(
    registry: Registry, tasks: Tasks, origin: str | None, method: str
) -> None:
    run_id = _plant(registry, origin)
    params = TaskParams(taskId=run_id, inputResponses={"approval": {"action": "accept"}})
    with pytest.raises(MCPError, match=f"{run_id} not found"):
        _ask(getattr(tasks, method), params)
    assert resolve_store(registry).get(run_id).status == "awaiting_approval"  # untouched


def test_a_run_started_over_mcp_is_found(registry: Registry, tasks: Tasks) -> None:
    run_id = _plant(registry, Origin.MCP)
    assert _ask(tasks.get, TaskParams(taskId=run_id))["taskId"] == run_id


def test_every_front_end_records_its_origin(
    registry: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    store = resolve_store(registry)
    by_api = registry.call("add", {"a": 1, "b": 2})
    assert store.get(by_api.run_id).origin == Origin.API
    assert cli(["run", "add", "--input", '{"a": 1, "b": 2}']) == 0
    by_cli = [r for r in store.query(tool="add") if r.run_id != by_api.run_id]
    assert [r.origin for r in by_cli] == [Origin.CLI]
    assert not any(visible_over_mcp(r) for r in store.query())


def test_moving_a_pending_run_to_mcp_breaks_its_binding(registry: Registry) -> None:
    # the origin is bound into the pending row's MAC: rewriting it in the database does not
    # hand an MCP client the operator's approval
    pending = registry.call("delete_file", {"path": "x"})
    assert pending.status == "awaiting_approval"
    store = resolve_store(registry)
    assert binding.verify(store, store.get(pending.run_id))
    store.update(pending.run_id, origin=Origin.MCP)
    assert not binding.verify(store, store.get(pending.run_id))
