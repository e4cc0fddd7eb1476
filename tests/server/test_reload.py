"""``--reload``: a valid change swaps the tool set and notifies; an invalid one keeps it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from .serve_helpers import SUBTRACT_TOOL, stdio_params, wait_for

pytestmark = pytest.mark.timeout(60)


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
                (registry_dir / "tools.d" / "subtract.yaml").write_text(SUBTRACT_TOOL)
                await wait_for(lambda: changed, "tools/list_changed")
                after = await names()
                (registry_dir / "tools.d" / "broken.yaml").write_text("toolctl: 1\nname: [\n")
                await wait_for(lambda: "still serving the previous" in log(), "the error log")
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
            await wait_for(lambda: changed, "tools/list_changed")
            return [t.name for t in (await c.list_tools()).tools]

    with http_server(registry_dir, "--reload") as server:
        names = anyio.run(main, server.url)
    assert "plus" in names and "add" not in names
    assert any("(+plus -add)" in line for line in server.log)
