"""A principal sees and acts on its own runs only, over every MCP method and revision (issue 22).

Runs of two principals (alice and bob, from one issuer), of the same subject from another
issuer, and of an unauthenticated MCP client sit in one history. Each ``tasks/*`` method of
each protocol revision, and the 2026-07-28 approval/resume follow-up (``requestState``), is
driven in process as alice: every run but hers is "not found" and stays as it was. The handlers
read the caller from the request's ASGI scope, where the OAuth middleware puts it.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

import toolctl
from toolctl.principal import Principal
from toolctl.registry import Registry
from toolctl.runtime.api import resolve_store
from toolctl.runtime.history.records import Origin, RunRecord
from toolctl.server.identity import PRINCIPAL_KEY
from toolctl.server.roundtrip import follow_up
from toolctl.server.tasks import EXTENSION, ListParams, TaskParams, Tasks
from toolctl.server.toolset import Selection, build_toolset
from toolctl.server.visibility import visible_over_mcp

OLD, MODERN = "2025-11-25", "2026-07-28"
ALICE = Principal("https://idp.example.com", "alice", "app", frozenset({"toolctl.call"}))
BOB = Principal("https://idp.example.com", "bob", "app", frozenset({"toolctl.call"}))
ALICE_ELSEWHERE = Principal("https://other-idp.example.com", "alice")
OTHERS = {"bob": BOB, "alice-of-another-issuer": ALICE_ELSEWHERE, "anonymous": None}
# the methods each revision has (2026-07-28 inlines results in tasks/get and has no listing)
METHODS = {OLD: ["get", "result", "update", "cancel"], MODERN: ["get", "update", "cancel"]}


@pytest.fixture
def registry(registry_dir: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    monkeypatch.chdir(registry_dir)
    monkeypatch.syspath_prepend(str(registry_dir))
    return toolctl.load(project=registry_dir, packs=False)


@pytest.fixture
def tasks(registry: Registry) -> Tasks:
    toolset = build_toolset(registry, Selection())
    return Tasks(lambda: toolset)


def ctx(version: str, principal: Principal | None) -> Any:
    """A request context as the SDK builds it over HTTP, from ``principal``."""
    scope = {PRINCIPAL_KEY: principal} if principal is not None else {}
    caps = SimpleNamespace(extensions={EXTENSION: {}})
    return SimpleNamespace(
        protocol_version=version,
        request=SimpleNamespace(scope=scope, headers={}),
        session=SimpleNamespace(client_capabilities=caps),
        meta=None,
    )


def _plant(
    registry: Registry,
    who: Principal | None,
    tool: str = "chores",
    status: str = "awaiting_approval",
) -> str:
    run_id = f"run-{tool}-{who.key.replace(' ', '-') if who else 'anonymous'}"
    resolve_store(registry).insert(
        RunRecord(
            run_id=run_id,
            tool=tool,
            status=status,
            tool_digest=registry.get(tool).digest,
            created_at=time.time(),
            background=True,
            origin=Origin.MCP,
            principal=who.public() if who else None,
        )
    )
    return run_id


def _ask(handler: Callable[..., Any], version: str, who: Principal | None, params: Any) -> Any:
    return anyio.run(handler, ctx(version, who), params)


@pytest.mark.parametrize("version", [OLD, MODERN])
@pytest.mark.parametrize("other", list(OTHERS))
def test_another_principals_task_is_not_found_by_any_method(
    registry: Registry, tasks: Tasks, version: str, other: str
) -> None:
    run_id = _plant(registry, OTHERS[other])
    for method in METHODS[version]:
        params = TaskParams(taskId=run_id, inputResponses={"approval": {"action": "accept"}})
        with pytest.raises(MCPError, match=f"{run_id} not found"):
            _ask(getattr(tasks, method), version, ALICE, params)
        assert resolve_store(registry).get(run_id).status == "awaiting_approval", method


@pytest.mark.parametrize("version", [OLD, MODERN])
def test_a_principal_finds_its_own_task(registry: Registry, tasks: Tasks, version: str) -> None:
    run_id = _plant(registry, ALICE)
    assert _ask(tasks.get, version, ALICE, TaskParams(taskId=run_id))["taskId"] == run_id
    # the same user through another client of the same issuer is the same principal
    same_user = Principal(ALICE.issuer, ALICE.subject, "cli-app")
    assert _ask(tasks.get, version, same_user, TaskParams(taskId=run_id))["taskId"] == run_id


def test_tasks_list_shows_each_principal_its_own_tasks(registry: Registry, tasks: Tasks) -> None:
    mine = _plant(registry, ALICE)
    planted = {name: _plant(registry, who) for name, who in OTHERS.items()}
    listed = _ask(tasks.list, OLD, ALICE, ListParams())["tasks"]
    assert [t["taskId"] for t in listed] == [mine]
    anonymous = _ask(tasks.list, OLD, None, ListParams())["tasks"]
    assert [t["taskId"] for t in anonymous] == [planted["anonymous"]]


def test_a_principal_cancels_its_own_task(registry: Registry, tasks: Tasks) -> None:
    run_id = _plant(registry, ALICE, status="running")
    _ask(tasks.cancel, OLD, ALICE, TaskParams(taskId=run_id))
    assert resolve_store(registry).get(run_id).status == "cancelled"


@pytest.mark.parametrize("other", list(OTHERS))
@pytest.mark.parametrize("ask", ["approval", "resume"])
def test_a_follow_up_cannot_answer_another_principals_run(
    registry: Registry, other: str, ask: str
) -> None:
    # 2026-07-28: a sealed requestState names the run; the run must be the caller's as well
    tool = "delete_file" if ask == "approval" else "greet"
    status = "awaiting_approval" if ask == "approval" else "suspended"
    run_id = _plant(registry, OTHERS[other], tool=tool, status=status)
    answer = {"action": "accept", "content": {"name": "x"}}
    params = types.CallToolRequestParams(
        name=tool,
        arguments={"path": "x"} if tool == "delete_file" else {},
        requestState=json.dumps({"run": run_id, "ask": ask}),
        inputResponses={ask: answer},
    )
    with pytest.raises(MCPError, match="Invalid or expired requestState"):
        anyio.run(follow_up, ctx(MODERN, ALICE), registry, registry.get(tool), params)
    assert resolve_store(registry).get(run_id).status == status


def test_visibility_needs_the_same_issuer_and_subject() -> None:
    record = RunRecord("r", "t", "succeeded", "d", 0.0, origin=Origin.MCP, principal=ALICE.public())
    assert visible_over_mcp(record, ALICE)
    assert not visible_over_mcp(record, BOB)
    assert not visible_over_mcp(record, ALICE_ELSEWHERE)
    assert not visible_over_mcp(record, None)  # a server without OAuth: not its run
    anonymous = RunRecord("r", "t", "succeeded", "d", 0.0, origin=Origin.MCP)
    assert visible_over_mcp(anonymous, None) and not visible_over_mcp(anonymous, ALICE)


def test_a_call_over_mcp_records_its_principal_and_the_cli_lists_by_it(
    registry: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolctl.cli.app import run as cli

    for who in (ALICE, BOB):
        result = registry.call("add", {"a": 1, "b": 2}, origin=Origin.MCP, principal=who)
        assert resolve_store(registry).get(result.run_id).principal == who.public()
    capsys.readouterr()
    assert cli(["runs", "list", "--principal", "bob", "-f", "json"]) == 0
    listed = json.loads(capsys.readouterr().out)
    assert [r["principal"]["sub"] for r in listed] == ["bob"]
    assert cli(["runs", "show", listed[0]["run_id"], "-f", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["principal"] == {"iss": BOB.issuer, "sub": "bob", "client_id": "app"}


def test_moving_a_pending_run_to_another_principal_breaks_its_binding(registry: Registry) -> None:
    from toolctl.runtime.history import binding

    pending = registry.call("delete_file", {"path": "x"}, origin=Origin.MCP, principal=BOB)
    store = resolve_store(registry)
    assert binding.verify(store, store.get(pending.run_id))
    store.update(pending.run_id, principal=ALICE.public())
    assert not binding.verify(store, store.get(pending.run_id))


def test_an_approved_run_keeps_its_principal(registry: Registry) -> None:
    from toolctl.runtime.api import approve

    pending = registry.call("delete_file", {"path": "x"}, origin=Origin.MCP, principal=BOB)
    approve(registry, pending.run_id)
    assert resolve_store(registry).get(pending.run_id).principal == BOB.public()


def test_spans_carry_the_principal_never_the_token() -> None:
    from toolctl.server.telemetry import ConnectionAttributes

    attributes = ConnectionAttributes()
    attributes.transport = "http"
    request = SimpleNamespace(
        scope={PRINCIPAL_KEY: ALICE},
        client=None,
        url=None,
        headers={"authorization": "Bearer secret-token"},
    )
    found = attributes.attributes(SimpleNamespace(request=request))
    assert found["enduser.id"] == "alice"
    assert found["toolctl.principal.issuer"] == ALICE.issuer
    assert found["toolctl.principal.client_id"] == "app"
    assert "secret-token" not in repr(found)
    anonymous = SimpleNamespace(
        request=SimpleNamespace(scope={}, client=None, url=None, headers={})
    )
    assert "enduser.id" not in attributes.attributes(anonymous)
