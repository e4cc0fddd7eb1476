"""Over MCP (a real ``toolctl serve`` over stdio, the SDK client): a sensitive output field never
reaches the client, nor does a secret input value through progress, log notifications or error
results (issue 20, class 1)."""

from __future__ import annotations

import json
import shutil
import warnings
from pathlib import Path
from typing import Any

import anyio
import pytest

import toolctl

from .serve_helpers import stdio_params

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.timeout(90),
    pytest.mark.skipif(
        not (ROOT / "tools.d" / "customer_lookup.yaml").exists(),
        reason="the example registry is not in this checkout",
    ),
]

SECRET = "S3CR3T-pin-4711-served"
PROBE_TOOL = """\
toolctl: 1
name: pin_probe
description: Uses a PIN (a secret) and reports on it through every channel it has.
handler: secret_probe:probe
inputSchema:
  type: object
  properties:
    pins: {type: array, items: {type: string, x-sensitive: true}}
    fail: {type: boolean}
  required: [pins]
"""
PROBE_HANDLER = """\
def probe(args, ctx):
    pin = args["pins"][0]
    ctx.progress(1, 2, f"checking {pin}")
    ctx.observe.log(f"checking {pin}", level=30, pin_again=pin)
    if args.get("fail"):
        raise ValueError(f"wrong pin {pin}")
    return {"checked": f"pin {pin} is fine"}
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A copy of the example project with one more tool (its history stays in tmp)."""
    root = tmp_path / "project"
    root.mkdir()
    for name in ("tools.d", "examples"):
        shutil.copytree(ROOT / name, root / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "toolctl.yaml", root / "toolctl.yaml")
    (root / "tools.d" / "pin_probe.yaml").write_text(PROBE_TOOL, "utf-8")
    (root / "examples" / "secret_probe.py").write_text(PROBE_HANDLER, "utf-8")
    return root


def _served(project: Path, body: Any, **client: Any) -> Any:
    from mcp import Client

    async def main() -> Any:
        async with Client(stdio_params(project), mode="legacy", **client) as c:
            return await body(c)

    return anyio.run(main)


def _dump(value: Any) -> str:
    return json.dumps(value.model_dump(by_alias=True, exclude_none=True, mode="json"))


def test_customer_lookup_api_key_never_reaches_an_mcp_client(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(project / "examples"))
    raw = toolctl.load_project(project).call("customer_lookup", {"customerId": "C1001"})
    key = raw.output["apiKey"]  # the application (Python API) gets the raw record
    assert raw.ok and len(key) > 8

    async def body(c: Any) -> Any:
        listed = await c.list_tools()
        result = await c.call_tool("customer_lookup", {"customerId": "C1001"})
        return listed, result

    listed, result = _served(project, body)
    tool = next(t for t in listed.tools if t.name == "customer_lookup")
    assert "apiKey" not in json.dumps(tool.output_schema)
    assert result.is_error is False and result.structured_content["id"] == "C1001"
    assert "apiKey" not in result.structured_content
    assert key not in _dump(result) and key not in _dump(listed)


def test_progress_logs_and_errors_sent_to_a_client_never_hold_a_secret_input(
    project: Path,
) -> None:
    progress: list[str | None] = []
    logs: list[Any] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async def on_log(params: Any) -> None:
        logs.append(params)

    async def body(c: Any) -> Any:
        with warnings.catch_warnings():  # the SDK marks logging deprecated in 2026-07-28
            warnings.simplefilter("ignore")
            await c.set_logging_level("info")
        fine = await c.call_tool("pin_probe", {"pins": [SECRET]}, progress_callback=on_progress)
        failed = await c.call_tool("pin_probe", {"pins": [SECRET], "fail": True})
        return fine, failed

    fine, failed = _served(project, body, logging_callback=on_log)
    assert fine.is_error is False and failed.is_error is True
    assert "[REDACTED]" in _dump(failed) and "[REDACTED]" in _dump(fine)
    assert progress and all(SECRET not in str(m) for m in progress)
    assert any("[REDACTED]" in str(m) for m in progress)
    shown = json.dumps([entry.model_dump(mode="json") for entry in logs])
    assert logs and SECRET not in shown and "[REDACTED]" in shown
    assert SECRET not in _dump(fine) + _dump(failed)
