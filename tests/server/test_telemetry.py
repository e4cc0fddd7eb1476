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
