"""``--reload``: a valid change swaps the tool set and notifies; an invalid one keeps it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from .serve_helpers import stdio_params

pytestmark = pytest.mark.timeout(60)

NEW_TOOL = """toolctl: 1
name: subtract
description: Subtract b from a.
handler: servetools:add
inputSchema:
  type: object
  properties: {a: {type: integer}, b: {type: integer}}
"""


async def _wait_for(predicate: Any, what: str) -> None:
    """Wait (up to 20 s) until ``predicate()`` holds."""
    with anyio.fail_after(20, shield=False):
        while not predicate():
            await anyio.sleep(0.05)


def test_reload_swaps_valid_changes_and_keeps_the_old_set_on_errors(
    registry_dir: Path, tmp_path: Path
) -> None:
    from mcp import Client
    from mcp.client.stdio import stdio_client
    from mcp_types import ToolListChangedNotification

    log_path = tmp_path / "server.log"
    changed: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            changed.append(message)

    def log() -> str:
        return log_path.read_text(encoding="utf-8")

    async def main() -> tuple[list[str], list[str], list[str]]:
        params = stdio_params(registry_dir, "--reload", "--log-level", "warning")
        with log_path.open("w", encoding="utf-8") as errlog:
            async with Client(
                stdio_client(params, errlog=errlog), mode="legacy", message_handler=on_message
            ) as c:
                assert c.server_capabilities.tools is not None
                assert c.server_capabilities.tools.list_changed is True

                async def names() -> list[str]:
                    return [t.name for t in (await c.list_tools()).tools]

                before = await names()
                (registry_dir / "tools.d" / "subtract.yaml").write_text(NEW_TOOL)
                await _wait_for(lambda: changed, "tools/list_changed")
                after = await names()
                (registry_dir / "tools.d" / "broken.yaml").write_text("toolctl: 1\nname: [\n")
                await _wait_for(lambda: "still serving the previous" in log(), "the error log")
                kept = await names()
                return before, after, kept

    before, after, kept = anyio.run(main)
    assert "subtract" not in before
    assert after == sorted([*before, "subtract"])
    assert kept == after
    assert len(changed) == 1
    text = log()
    assert f"reload: now serving {len(after)} tool(s) (+subtract)" in text
    assert "broken.yaml" in text  # the diagnostics name the file


def test_reload_over_http_notifies_the_client(registry_dir: Path) -> None:
    from mcp import Client
    from mcp_types import ToolListChangedNotification

    from .serve_helpers import http_server

    changed: list[Any] = []

    async def on_message(message: Any) -> None:
        if isinstance(message, ToolListChangedNotification):
            changed.append(message)

    async def main(url: str) -> list[str]:
        async with Client(url, mode="legacy", message_handler=on_message) as c:
            await c.list_tools()
            math = registry_dir / "tools.d" / "math.yaml"
            math.write_text(math.read_text().replace("name: add", "name: plus"))
            await _wait_for(lambda: changed, "tools/list_changed")
            return [t.name for t in (await c.list_tools()).tools]

    with http_server(registry_dir, "--reload") as server:
        names = anyio.run(main, server.url)
    assert "plus" in names and "add" not in names
    assert any("(+plus -add)" in line for line in server.log)
