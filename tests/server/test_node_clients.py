"""End to end with the Node.js clients: the MCP conformance suite against ``toolctl serve``
over HTTP, and the MCP Inspector CLI (protocol eras ``modern`` and ``auto``) over stdio and HTTP."""

# slow: these tests start server processes and Node.js

from __future__ import annotations

import contextlib
import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .nodetools import NodeTools
from .serve_helpers import http_server

pytestmark = pytest.mark.timeout(600)
CONFORMANCE = Path(__file__).parent / "conformance"


@pytest.fixture(scope="module")
def tools(mcp_node_tools: NodeTools) -> NodeTools:
    return mcp_node_tools


@pytest.mark.parametrize(
    "selection",
    [["--requirements", "2026-07-28"], ["--suite", "all"]],
    ids=["requirements-2026-07-28", "suite-all"],
)
def test_the_conformance_suite_passes_every_applicable_scenario(
    tools: NodeTools, tmp_path: Path, selection: list[str]
) -> None:
    registry = tmp_path / "conformance"
    shutil.copytree(CONFORMANCE, registry, ignore=shutil.ignore_patterns(".toolctl", "__pycache__"))
    with http_server(registry) as server:
        done = subprocess.run(
            [
                str(tools.node),
                str(tools.conformance),
                "server",
                "--url",
                server.url,
                *selection,
                "--expected-failures",
                str(CONFORMANCE / "expected-failures.yml"),
            ],
            cwd=tmp_path,
            env=tools.env(tmp_path),
            capture_output=True,
            text=True,
            timeout=500,
        )
    summary = done.stdout[done.stdout.rfind("=== SUMMARY ===") :]
    assert done.returncode == 0, summary + done.stderr[-2000:]
    for scenario in (
        "tasks-capability-negotiation",
        "tasks-wire-fields",
        "tasks-request-headers",
        "tasks-dispatch-and-envelope",
        "tasks-required-task-error",
        "json-schema-2020-12",
        "http-custom-header-server-validation",
        "dns-rebinding-protection",
        "input-required-result-multiple-input-requests",
        "input-required-result-multi-round",
        "input-required-result-tampered-state",
        "tasks-mrtr-composition",
    ):
        assert f"✓ {scenario}" in summary


def inspector(
    tools: NodeTools, registry: Path, era: str, method: str, *args: str, url: str | None = None
) -> dict[str, Any]:
    """One Inspector CLI request to ``toolctl serve`` in ``registry`` (over stdio, or to the
    HTTP server at ``url``): its JSON output."""
    target = [url] if url else [sys.executable, "-m", "toolctl", "serve"]
    done = subprocess.run(
        [
            str(tools.node),
            str(tools.inspector),
            "--cli",
            "--protocol-era",
            era,
            "--format",
            "json",
            "-q",
            # a loaded machine (CI's 2 cores under pytest-xdist) starts a server in more than
            # the Inspector's default 15 s
            "--connect-timeout",
            "90000",
            *target,
            "--method",
            method,
            *args,
        ],
        cwd=registry,
        env=tools.env(registry.parent),
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    out: dict[str, Any] = json.loads(done.stdout or done.stderr)
    return out


def _call(
    tools: NodeTools,
    registry: Path,
    era: str,
    name: str,
    args: dict[str, Any],
    url: str | None = None,
) -> Any:
    out = inspector(
        tools,
        registry,
        era,
        "tools/call",
        "--tool-name",
        name,
        "--tool-args-json",
        json.dumps(args),
        url=url,
    )
    return out["result"]


def _toolctl(registry: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "toolctl", *args, "--format", "json"],
        cwd=registry,
        capture_output=True,
        text=True,
        timeout=60,
    )


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("era", ["modern", "auto"])
def test_the_inspector_lists_and_calls_tools(
    tools: NodeTools, registry_dir: Path, era: str, transport: str
) -> None:
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(http_server(registry_dir)).url if transport == "http" else None
        listed = inspector(tools, registry_dir, era, "tools/list", url=url)["result"]["tools"]
        result = _call(tools, registry_dir, era, "add", {"a": 2, "b": 40}, url=url)
    names = [t["name"] for t in listed]
    assert names == sorted(names) and "add" in names
    assert result["structuredContent"] == {"sum": 42}
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "toolctl"


@pytest.mark.parametrize("era", ["modern", "auto"])
def test_approval_and_resume_with_a_client_that_cannot_answer(
    tools: NodeTools, registry_dir: Path, era: str
) -> None:
    # The Inspector CLI declares no elicitation: the call ends as an error naming the run,
    # which the user continues with toolctl.
    pending = _call(tools, registry_dir, era, "delete_file", {"path": "/tmp/x"})
    run = pending["_meta"]["dev.toolctl/run"]
    assert pending["isError"] is True and run["status"] == "awaiting_approval"
    approved = _toolctl(registry_dir, "approve", run["id"])
    assert approved.returncode == 0, approved.stderr
    assert json.loads(approved.stdout)["output"] == {"deleted": "/tmp/x"}

    suspended = _call(tools, registry_dir, era, "greet", {})
    run = suspended["_meta"]["dev.toolctl/run"]
    assert suspended["isError"] is True and run["status"] == "suspended"
    resumed = _toolctl(registry_dir, "resume", run["id"], "--data", '{"name": "Ada"}')
    assert json.loads(resumed.stdout)["output"] == {"greeting": "Hello, Ada!"}
