"""OpenTelemetry spans per tool call: GenAI/MCP attributes, the run id and status, the client's
trace continued, arguments only when opted in (redacted), never a secret."""

# slow: starts a Python process

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("opentelemetry.sdk")
pytestmark = pytest.mark.timeout(120)
PROBE = Path(__file__).parent / "otel_probe.py"


def spans(registry: Path, trace_arguments: bool) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, str(PROBE), str(registry / "tools.d"), "1" if trace_arguments else "0"],
        cwd=registry,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def test_each_tool_call_is_a_span_in_the_clients_trace(registry_dir: Path) -> None:
    seen = spans(registry_dir, trace_arguments=False)
    add, leaky = seen["spans"]
    assert add["name"] == "tools/call add" and leaky["name"] == "tools/call leaky"
    assert add["trace_id"] == leaky["trace_id"] == seen["trace_id"]  # continued, not a new trace
    attrs = add["attributes"]
    assert attrs["gen_ai.operation.name"] == "execute_tool" and attrs["gen_ai.tool.name"] == "add"
    assert attrs["toolctl.run.status"] == "succeeded" and attrs["gen_ai.tool.call.id"]
    assert "gen_ai.tool.call.arguments" not in attrs  # never without the opt-in
    assert leaky["attributes"]["error.type"] == "tool_error"
    assert leaky["attributes"]["toolctl.error.code"] == "handler_error"
    assert "hunter2" not in json.dumps(seen)


def test_arguments_appear_only_when_opted_in(registry_dir: Path) -> None:
    add = spans(registry_dir, trace_arguments=True)["spans"][0]
    assert json.loads(add["attributes"]["gen_ai.tool.call.arguments"]) == {"a": 1, "b": 2}


SERVE_PROBE = Path(__file__).parent / "otel_serve_probe.py"


def _probe(registry: Path, mode: str) -> list[dict[str, Any]]:
    done = subprocess.run(
        [sys.executable, str(SERVE_PROBE), mode],
        cwd=registry,
        capture_output=True,
        text=True,
        timeout=100,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    out: list[dict[str, Any]] = json.loads(done.stdout.strip().splitlines()[-1])
    return out


def test_every_request_over_http_is_a_span_with_its_connection(registry_dir: Path) -> None:
    found = _probe(registry_dir, "http")
    names = [s["name"] for s in found if s["kind"] == "SERVER"]
    # tools/list and server/discover too, not only tools/call; in both revisions
    assert "server/discover" in names and "initialize" in names
    assert names.count("tools/list") == 2 and names.count("tools/call add") == 2
    for span in found:
        if span["kind"] != "SERVER":
            continue
        attrs = span["attributes"]
        assert attrs["network.transport"] == "tcp"
        assert attrs["server.address"] == "127.0.0.1" and attrs["server.port"] > 0
        assert attrs["client.address"] == "127.0.0.1" and attrs["client.port"] > 0
    legacy_list = [
        s for s in found if s["name"] == "tools/list"
        and s["attributes"]["mcp.protocol.version"] == "2025-11-25"
    ]  # fmt: skip
    assert legacy_list and legacy_list[0]["attributes"]["mcp.session.id"]


def test_toolctl_run_is_a_span(registry_dir: Path) -> None:
    found = {s["name"]: s["attributes"] for s in _probe(registry_dir, "cli")}
    add = found["execute_tool add"]
    assert add["gen_ai.operation.name"] == "execute_tool" and add["gen_ai.tool.name"] == "add"
    assert add["toolctl.run.status"] == "succeeded" and add["gen_ai.tool.call.id"]
    leaky = found["execute_tool leaky"]
    assert leaky["error.type"] == "handler_error" and leaky["toolctl.run.status"] == "failed"
    assert "hunter2" not in json.dumps(found)
