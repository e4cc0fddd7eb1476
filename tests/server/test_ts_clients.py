"""Real TypeScript clients against ``toolctl serve``: the official TypeScript SDK v2 client
(``@modelcontextprotocol/client``) answering elicitation, sampling and roots in both revisions
(2026-07-28 input-required rounds, 2025-11-25 server-to-client requests), approval and resume
as the same questions, decline; Mastra's ``MCPClient`` (``@mastra/mcp``) listing and calling
tools with its input-request handler and its ``requireToolApproval`` policy; and the MCP
Inspector CLI, a client that declares no capability, for what a handler may ask it.

The clients live in ``tests/node`` (``npm ci --prefix tests/node``) and run on the Node 22 of
``.cache/mcp-node`` (Mastra needs Node >= 22.13). Missing, the tests skip with the reason,
unless ``TOOLCTL_REQUIRE_NODE_TOOLS=1`` (CI) makes that a failure."""

# slow: these tests start server processes and Node.js

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .nodetools import REQUIRED_ENV, NodeTools
from .serve_helpers import http_server
from .test_node_clients import _call

pytestmark = [pytest.mark.timeout(300), pytest.mark.requires("tests-node")]
NODE_DIR = Path(__file__).resolve().parents[1] / "node"


def _client(package: str) -> None:
    if not (NODE_DIR / "node_modules" / package / "package.json").is_file():
        reason = f"{package} is not installed in tests/node (npm ci --prefix tests/node)"
        if os.environ.get(REQUIRED_ENV):
            pytest.fail(f"{reason}; {REQUIRED_ENV} is set, so this is an error")
        pytest.skip(reason)


def _run(tools: NodeTools, script: str, registry: Path, plan: dict[str, Any]) -> dict[str, Any]:
    """Run ``tests/node/SCRIPT`` with ``plan`` in ``registry``: its JSON report."""
    plan = {"python": sys.executable, **plan}
    done = subprocess.run(
        [str(tools.node), str(NODE_DIR / script), json.dumps(plan)],
        cwd=registry,
        env=tools.env(registry.parent),
        capture_output=True,
        text=True,
        timeout=240,
        stdin=subprocess.DEVNULL,
    )
    lines = [line for line in done.stdout.splitlines() if line.startswith("{")]
    assert done.returncode == 0 and lines, done.stdout[-2000:] + done.stderr[-3000:]
    report: dict[str, Any] = json.loads(lines[-1])
    return report


@contextlib.contextmanager
def _server(registry: Path, transport: str):  # type: ignore[no-untyped-def]
    if transport == "stdio":
        yield "stdio"
    else:
        with http_server(registry) as server:
            yield server.url


ASKING_CALLS = [["survey", {}], ["delete_file", {"path": "/tmp/x"}], ["greet", {}], ["consult", {}]]


# Both revisions and both transports, each once (the CI budget); test_client_requests.py runs
# the Python SDK through every combination.
@pytest.mark.parametrize(("mode", "transport"), [("auto", "stdio"), ("legacy", "http")])
def test_the_typescript_sdk_answers_every_question(
    mcp_node_tools: NodeTools, registry_dir: Path, mode: str, transport: str
) -> None:
    _client("@modelcontextprotocol/client")
    with _server(registry_dir, transport) as target:
        plan = {"server": target, "mode": mode, "elicit": "accept", "calls": ASKING_CALLS}
        report = _run(mcp_node_tools, "ts_client.mjs", registry_dir, plan)
    survey, deleted, greeted, consulted = report["results"]
    # ctx.ask: a form and the roots in round 1, the model in round 2, nothing asked twice
    assert survey["structuredContent"] == {
        "name": "Ada",
        "roots": ["file:///work"],
        "summary": "all good",
    }
    # approval and resume data: the same elicitation, answered by the same handler
    assert deleted["structuredContent"] == {"deleted": "/tmp/x"} and not deleted["isError"]
    assert greeted["structuredContent"] == {"greeting": "Hello, Ada!"}
    # the client declared sampling: ctx.can_ask lets the handler ask it
    assert consulted["content"][0]["text"] == "the model said: all good"
    assert report["asked"] == [
        "elicitation",
        "roots",
        "sampling",
        "elicitation",
        "elicitation",
        "sampling",
    ]


@pytest.mark.parametrize(("answer", "mode"), [("decline", "auto"), ("cancel", "legacy")])
def test_the_typescript_sdk_declines_and_the_round_trip_ends(
    mcp_node_tools: NodeTools, registry_dir: Path, mode: str, answer: str
) -> None:
    _client("@modelcontextprotocol/client")
    plan = {"server": "stdio", "mode": mode, "elicit": answer, "calls": ASKING_CALLS[:3]}
    report = _run(mcp_node_tools, "ts_client.mjs", registry_dir, plan)
    survey, deleted, greeted = report["results"]
    # the handler gets the refusal and decides (no loop, no InputRequiredRoundsExceeded)
    assert survey["structuredContent"]["summary"] == "the user declined"
    # one round each: the call ends, naming the run, which stays (or ends) as toolctl says
    assert report["asked"] == ["elicitation", "roots", "elicitation", "elicitation"]
    run = deleted["_meta"]["dev.toolctl/run"]
    assert deleted["isError"] is True
    assert run["status"] == ("declined" if answer == "decline" else "awaiting_approval")
    assert greeted["isError"] is True
    assert greeted["_meta"]["dev.toolctl/run"]["status"] == "suspended"


@pytest.mark.parametrize("transport", ["http"])  # stdio: the decline test below
def test_mastra_lists_and_calls_tools_and_answers_their_questions(
    mcp_node_tools: NodeTools, registry_dir: Path, transport: str
) -> None:
    _client("@mastra/mcp")
    calls = [["add", {"a": 2, "b": 40}], ["delete_file", {"path": "/tmp/x"}], ["greet", {}]]
    with _server(registry_dir, transport) as target:
        plan = {"server": target, "elicit": "accept", "calls": calls}
        report = _run(mcp_node_tools, "mastra_client.mjs", registry_dir, plan)
    assert {"toolctl_add", "toolctl_delete_file", "toolctl_greet"} <= set(report["tools"])
    added, deleted, greeted = report["results"]
    assert added == {"sum": 42}
    # toolctl's approval and resume questions reach Mastra's inputRequests handler
    assert deleted == {"deleted": "/tmp/x"} and greeted == {"greeting": "Hello, Ada!"}
    assert report["asked"] == ["approval", "resume"]
    # Mastra's requireToolApproval policy, fed by the annotations toolctl lists: only the
    # destructive tool needs the host's approval as well
    assert report["needsApproval"] == ["toolctl_delete_file"]


def test_mastra_declining_an_approval_declines_the_run(
    mcp_node_tools: NodeTools, registry_dir: Path
) -> None:
    _client("@mastra/mcp")
    plan = {"server": "stdio", "elicit": "decline", "calls": [["delete_file", {"path": "/x"}]]}
    report = _run(mcp_node_tools, "mastra_client.mjs", registry_dir, plan)
    assert report["asked"] == ["approval"]
    assert "declined" in json.dumps(report["results"][0])


@pytest.mark.parametrize("era", ["auto"])
def test_the_inspector_is_never_asked_what_it_cannot_answer(
    mcp_node_tools: NodeTools, registry_dir: Path, era: str
) -> None:
    # The Inspector CLI declares no capability: a handler that checks ctx.can_ask does
    # without; one that asks anyway is refused (-32021 in 2026-07-28), never left hanging.
    consulted = _call(mcp_node_tools, registry_dir, era, "consult", {})
    assert consulted["content"][0]["text"] == "no model to ask: answered alone"
    assert consulted["isError"] is False
