"""Background tools as MCP tasks over a real stdio server, in both revisions: to completion
(the result honours outputSchema), cancelled, unknown; and with the MCP Inspector CLI."""

# slow: these tests start server processes

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from unittest.mock import ANY

import pytest

from .nodetools import NodeTools
from .test_node_clients import _call

pytestmark = pytest.mark.timeout(120)
TASKS = "io.modelcontextprotocol/tasks"
ENVELOPE = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "0"},
    "io.modelcontextprotocol/clientCapabilities": {"extensions": {TASKS: {}}},
}


class Wire:
    """A ``toolctl serve`` subprocess spoken to one JSON-RPC line at a time."""

    def __init__(self, registry: Path, modern: bool, *, elicits: bool = False) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "toolctl", "serve"],
            cwd=registry,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
        )
        self.modern, self.next_id = modern, 0
        caps = {**ENVELOPE["io.modelcontextprotocol/clientCapabilities"]}
        if elicits:
            caps["elicitation"] = {"form": {}}
        self.envelope = {**ENVELOPE, "io.modelcontextprotocol/clientCapabilities": caps}
        if not modern:
            self.rpc("initialize", protocolVersion="2025-11-25", capabilities={"tasks": {}},
                     clientInfo={"name": "probe", "version": "0"})  # fmt: skip
            self._send({"jsonrpc": "2.0", "method": "notifications/initialized"})

    def _send(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def rpc(self, method: str, **params: Any) -> Any:
        self.next_id += 1
        if self.modern:
            params["_meta"] = self.envelope
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdout is not None
        while True:
            reply = json.loads(self.proc.stdout.readline())
            if reply.get("id") == self.next_id:
                return reply

    def close(self) -> None:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.close()
        self.proc.wait(30)
        self.proc.stdout.close()


def _start(wire: Wire, name: str, args: dict[str, Any]) -> dict[str, Any]:
    extra = {} if wire.modern else {"task": {"ttl": 60000}}
    reply = wire.rpc("tools/call", name=name, arguments=args, **extra)["result"]
    task: dict[str, Any] = reply if wire.modern else reply["task"]
    assert task["status"] == "working" and (reply.get("resultType") == "task") == wire.modern
    return task


@pytest.mark.parametrize("modern", [True, False], ids=["2026-07-28", "2025-11-25"])
def test_a_background_tool_runs_as_a_task_to_completion(registry_dir: Path, modern: bool) -> None:
    wire = Wire(registry_dir, modern)
    try:
        task_id = _start(wire, "tally", {"label": "plums"})["taskId"]
        deadline = time.monotonic() + 60
        while (got := wire.rpc("tasks/get", taskId=task_id)["result"])["status"] == "working":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert got["status"] == "completed"
        if modern:
            result = got["result"]
        else:
            result = wire.rpc("tasks/result", taskId=task_id)["result"]
            listed = wire.rpc("tasks/list")["result"]["tasks"]
            assert [t["taskId"] for t in listed] == [task_id]
    finally:
        wire.close()
    # the model view, valid against the outputSchema (never the transcript form)
    assert result["structuredContent"] == {"label": "plums", "count": 5}
    assert result["isError"] is False
    # tasks/result names its task; the result inlined in tasks/get must not (SEP-2663)
    related = result["_meta"].get("io.modelcontextprotocol/related-task")
    assert related == (None if modern else {"taskId": task_id})


@pytest.mark.parametrize("modern", [True, False], ids=["2026-07-28", "2025-11-25"])
def test_a_cancelled_task_stops_its_run(registry_dir: Path, modern: bool) -> None:
    from toolctl.runtime.history.sqlite import open_store

    wire = Wire(registry_dir, modern)
    try:
        task_id = _start(wire, "chores", {"seconds": 60})["taskId"]
        wire.rpc("tasks/cancel", taskId=task_id)
        status = wire.rpc("tasks/get", taskId=task_id)["result"]["status"]
        unknown = wire.rpc("tasks/get", taskId="0000")["error"]
    finally:
        wire.close()
    assert status == "cancelled"
    assert open_store(registry_dir / ".toolctl" / "state.db").get(task_id).status == "cancelled"
    assert unknown["code"] == -32602 and "not found" in unknown["message"]


def test_background_tools_are_listed_as_task_capable_in_2025_11_25(registry_dir: Path) -> None:
    wire = Wire(registry_dir, False)
    try:
        tools = {t["name"]: t for t in wire.rpc("tools/list")["result"]["tools"]}
    finally:
        wire.close()
    assert tools["tally"]["execution"] == {"taskSupport": "optional"}
    assert "execution" not in tools["add"]


def test_a_client_without_the_extension_gets_the_result_directly(registry_dir: Path) -> None:
    wire = Wire(registry_dir, True)
    wire_envelope = dict(ENVELOPE, **{"io.modelcontextprotocol/clientCapabilities": {}})
    try:
        wire.next_id += 1
        params = {"name": "tally", "arguments": {}, "_meta": wire_envelope}
        wire._send({"jsonrpc": "2.0", "id": wire.next_id, "method": "tools/call", "params": params})
        assert wire.proc.stdout is not None
        reply = json.loads(wire.proc.stdout.readline())
    finally:
        wire.close()
    assert reply["result"]["resultType"] == "complete"
    assert reply["result"]["structuredContent"] == {"label": "items", "count": 5}


def test_the_inspector_runs_a_task_to_completion(
    registry_dir: Path, mcp_node_tools: NodeTools
) -> None:
    result = _call(mcp_node_tools, registry_dir, "modern", "tally", {"label": "figs"})
    assert result["structuredContent"] == {"label": "figs", "count": 4}
    # the result came from tasks/get, inlined: it names its run, not its task (SEP-2663)
    assert "io.modelcontextprotocol/related-task" not in result["_meta"]
    assert result["_meta"]["dev.toolctl/run"]["status"] == "succeeded"


def test_a_task_that_needs_input_is_answered_with_tasks_update(registry_dir: Path) -> None:
    wire = Wire(registry_dir, True)
    try:
        task_id = _start(wire, "greet_later", {})["taskId"]
        deadline = time.monotonic() + 60
        while (got := wire.rpc("tasks/get", taskId=task_id)["result"])["status"] == "working":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert got["status"] == "input_required"
        form = got["inputRequests"]["resume"]
        assert form["method"] == "elicitation/create"
        assert form["params"]["requestedSchema"]["required"] == ["name"]
        answer = {"resume": {"action": "accept", "content": {"name": "Lin"}}}
        assert wire.rpc("tasks/update", taskId=task_id, inputResponses=answer)["result"] == {
            "resultType": "complete",
            "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "toolctl", "version": ANY}},
        }
        while (got := wire.rpc("tasks/get", taskId=task_id)["result"])["status"] != "completed":
            assert time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        wire.close()
    assert got["result"]["structuredContent"] == {"greeting": "Hello, Lin!"}


def test_questions_before_the_queue_then_the_task(registry_dir: Path) -> None:
    # An approval, then the tool's inputRequests, each an input-required round on tools/call
    # (no task yet); the round that queues the run answers with the task, which quotes the answer.
    wire = Wire(registry_dir, True, elicits=True)
    call: dict[str, Any] = {"name": "welcome_later", "arguments": {}}
    try:
        rounds, reply = [], wire.rpc("tools/call", **call)["result"]
        while reply["resultType"] == "input_required":
            assert "taskId" not in reply
            (key,) = reply["inputRequests"]
            rounds.append(key)
            answer = {key: {"action": "accept", "content": {"name": "Lin"}}}
            state = {"requestState": reply["requestState"]}
            reply = wire.rpc("tools/call", **call, inputResponses=answer, **state)["result"]
        assert rounds == ["approval", "who"] and reply["resultType"] == "task"
        assert "requestState" not in reply and "inputRequests" not in reply
        deadline = time.monotonic() + 60
        while (got := wire.rpc("tasks/get", taskId=reply["taskId"])["result"])["status"] != (
            "completed"
        ):
            assert got["status"] == "working" and time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        wire.close()
    assert got["result"]["content"][0]["text"] == "Hello, Lin!"


def test_every_run_status_is_a_task_status() -> None:
    # A run that waits for someone asks for input; one that ended with a call result (an error
    # result included) completed; an interrupted run has no result to give.
    from toolctl.runtime.result import RunStatus
    from toolctl.server.tasks import task_status

    by_task: dict[str, set[str]] = {}
    for status in RunStatus:
        by_task.setdefault(task_status(status), set()).add(status.value)
    assert by_task == {
        "working": {"running"},
        "input_required": {"awaiting_approval", "suspended"},
        "completed": {"succeeded", "failed", "declined", "timed_out"},
        "cancelled": {"cancelled"},
        "failed": {"interrupted"},
    }


def test_the_tasks_extension_is_held_to_its_contract(registry_dir: Path) -> None:
    wire = Wire(registry_dir, True)
    bare = dict(ENVELOPE, **{"io.modelcontextprotocol/clientCapabilities": {}})
    try:
        task_id = _start(wire, "tally", {"label": "kiwis"})["taskId"]
        removed = [wire.rpc(m, taskId=task_id)["error"]["code"] for m in ("tasks/result",)]
        removed.append(wire.rpc("tasks/list")["error"]["code"])
        undeclared = {}
        for method in ("tasks/get", "tasks/update", "tasks/cancel"):
            wire.next_id += 1
            params = {"taskId": task_id, "_meta": bare}
            wire._send({"jsonrpc": "2.0", "id": wire.next_id, "method": method, "params": params})
            assert wire.proc.stdout is not None
            undeclared[method] = json.loads(wire.proc.stdout.readline())["error"]
        sync = wire.rpc("tools/call", name="add", arguments={"a": 1, "b": 1})["result"]
    finally:
        wire.close()
    assert removed == [-32601, -32601]
    assert {e["code"] for e in undeclared.values()} == {-32021}
    assert undeclared["tasks/get"]["data"]["requiredCapabilities"] == {"extensions": {TASKS: {}}}
    # a tool that is not background answers at once, and names no task
    assert sync["resultType"] == "complete" and sync["structuredContent"] == {"sum": 2}
    assert "io.modelcontextprotocol/related-task" not in sync.get("_meta", {})


def test_a_legacy_task_request_for_a_sync_tool_creates_no_task(registry_dir: Path) -> None:
    wire = Wire(registry_dir, False)
    try:
        reply = wire.rpc("tools/call", name="add", arguments={"a": 2, "b": 2}, task={"ttl": 1000})
        listed = wire.rpc("tasks/list")["result"]["tasks"]
    finally:
        wire.close()
    assert reply["result"]["structuredContent"] == {"sum": 4} and "task" not in reply["result"]
    assert listed == []


def test_tasks_get_over_http_checks_its_mcp_name_header(registry_dir: Path) -> None:
    from .serve_helpers import http_server
    from .test_protocols import _modern_post

    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "tally", "arguments": {}, "_meta": ENVELOPE}}  # fmt: skip
    with http_server(registry_dir) as server:
        _, created = _modern_post(server.port, call, Mcp_Method="tools/call", Mcp_Name="tally")
        task_id = created["result"]["taskId"]
        get = {"jsonrpc": "2.0", "id": 2, "method": "tasks/get",
               "params": {"taskId": task_id, "_meta": ENVELOPE}}  # fmt: skip
        _, wrong = _modern_post(server.port, get, Mcp_Method="tasks/get", Mcp_Name="other")
        _, right = _modern_post(server.port, get, Mcp_Method="tasks/get", Mcp_Name=task_id)
    assert wrong["error"]["code"] == -32020
    assert right["result"]["taskId"] == task_id


def test_a_background_handler_that_asks_the_client_waits_for_tasks_update(
    registry_dir: Path,
) -> None:
    wire = Wire(registry_dir, True)

    def settled() -> dict[str, Any]:
        deadline = time.monotonic() + 60
        while (got := wire.rpc("tasks/get", taskId=task_id)["result"])["status"] == "working":
            assert time.monotonic() < deadline
            time.sleep(0.2)
        return got  # type: ignore[no-any-return]

    try:
        task_id = _start(wire, "survey_later", {})["taskId"]
        asked = settled()
        assert asked["status"] == "input_required"
        assert sorted(asked["inputRequests"]) == ["where", "who"]
        # a partial answer: the run asks again for what is missing, nothing else
        who = {"who": {"action": "accept", "content": {"name": "Lin"}}}
        wire.rpc("tasks/update", taskId=task_id, inputResponses=who)
        again = settled()
        assert again["status"] == "input_required" and list(again["inputRequests"]) == ["where"]
        where = {"where": {"roots": [{"uri": "file:///lin"}]}}
        wire.rpc("tasks/update", taskId=task_id, inputResponses=where)
        deadline = time.monotonic() + 60
        while (got := wire.rpc("tasks/get", taskId=task_id)["result"])["status"] != "completed":
            assert time.monotonic() < deadline
            time.sleep(0.2)
    finally:
        wire.close()
    assert got["result"]["content"][0]["text"] == "Lin at file:///lin"
    assert got["result"]["isError"] is False


@pytest.mark.parametrize("modern", [True, False], ids=["2026-07-28", "2025-11-25"])
def test_a_task_whose_worker_died_fails_instead_of_working_forever(
    registry_dir: Path, modern: bool
) -> None:
    wire = Wire(registry_dir, modern)
    try:
        task_id = _start(wire, "vanish", {})["taskId"]
        deadline = time.monotonic() + 60
        while (got := wire.rpc("tasks/get", taskId=task_id)["result"])["status"] == "working":
            assert time.monotonic() < deadline, "the task never left working"
            time.sleep(0.2)
    finally:
        wire.close()
    # a protocol-level failure (no tool result exists), not a tool error: SEP-2663's "failed"
    assert got["status"] == "failed" and "interrupted" in got["statusMessage"]
    if modern:
        assert "result" not in got
        assert isinstance(got["error"]["code"], int) and got["error"]["message"]
