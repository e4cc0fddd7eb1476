"""The "Serve over MCP" page (docs/serve.md): its client configs, its Python client and its
console output are real."""

from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from .serve_helpers import run_serve

pytestmark = pytest.mark.timeout(60)
README = Path(__file__).resolve().parents[2] / "docs" / "serve.md"
PLACEHOLDER = "/path/to/project/tools.d"


def section() -> str:
    return README.read_text(encoding="utf-8")


def test_the_client_config_starts_a_server_the_sdk_client_can_use(registry_dir: Path) -> None:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    block = re.search(r"```json\n(.*?)```", section(), re.S)
    assert block is not None
    server = json.loads(block.group(1))["mcpServers"]["my-tools"]
    command = shutil.which(server["command"], path=str(Path(sys.executable).parent))
    assert command is not None
    args = [a.replace(PLACEHOLDER, str(registry_dir / "tools.d")) for a in server["args"]]

    async def names() -> list[str]:
        async with Client(StdioServerParameters(command=command, args=args), mode="legacy") as c:
            return [t.name for t in (await c.list_tools()).tools]

    listed: list[Any] = anyio.run(names)
    assert "add" in listed and "greet" in listed


def test_the_refusal_shown_is_the_real_output(registry_dir: Path) -> None:
    lines = section().splitlines()
    at = lines.index("$ toolctl serve --transport http --host 0.0.0.0")
    shown = lines[at + 1 : at + 3]
    proc = run_serve(registry_dir, "--transport", "http", "--host", "0.0.0.0")
    assert proc.returncode == 2
    assert proc.stderr.splitlines() == shown
