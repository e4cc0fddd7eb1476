"""tools/list over stdio and HTTP with the SDK's own client, and the mcp export it matches."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

import toolctl
import toolctl.contract

from .serve_helpers import http_server, stdio_params

pytestmark = pytest.mark.timeout(60)
REPO = Path(__file__).resolve().parents[2]


async def _list(server: Any) -> list[dict[str, Any]]:
    from mcp import Client

    async with Client(server, mode="legacy") as client:
        result = await client.list_tools()
    return [t.model_dump(by_alias=True, exclude_none=True, mode="json") for t in result.tools]


def list_stdio(registry: Path, *args: str) -> list[dict[str, Any]]:
    return anyio.run(_list, stdio_params(registry, *args))


def test_stdio_lists_enabled_tools_in_name_order_as_declared(registry_dir: Path) -> None:
    tools = list_stdio(registry_dir)
    names = [t["name"] for t in tools]
    assert names == sorted(names)
    assert "disabled_tool" not in names
    add = next(t for t in tools if t["name"] == "add")
    assert add["title"] == "Add numbers"
    assert add["annotations"] == {"readOnlyHint": True, "idempotentHint": True}
    # _meta keeps the declared keys and carries the contract digest a client can pin
    digest = toolctl.contract.contract_digest(toolctl.load_project(registry_dir).get("add"))
    assert add["_meta"] == {"com.example/owner": "team-a", "dev.toolctl/contractDigest": digest}
    assert add["outputSchema"]["required"] == ["sum"]


def test_tool_and_tag_select_what_is_served(registry_dir: Path) -> None:
    assert [t["name"] for t in list_stdio(registry_dir, "--tag", "text")] == ["picture", "shout"]
    assert [t["name"] for t in list_stdio(registry_dir, "--tool", "add", "--tool", "greet")] == [
        "add",
        "greet",
    ]


def test_http_lists_the_same_tools_as_stdio(registry_dir: Path) -> None:
    with http_server(registry_dir) as server:
        over_http = anyio.run(_list, server.url)
    assert over_http == list_stdio(registry_dir)


@pytest.mark.parametrize("where", ["tests/server/registry", "."])
def test_mcp_export_equals_the_live_tools_list(where: str) -> None:
    root = REPO / where
    registry = toolctl.load(root / "tools.d")
    live = list_stdio(root, str(root / "tools.d"))
    assert live == registry.export("mcp")["tools"]


def test_each_revision_lists_the_snapshot_served_when_it_asks(registry_dir: Path) -> None:
    # Each revision's listing is built on its first tools/list: one asked for before a reload
    # must not be served after it, and the reloading server's 2026-07-28 list is never reused.
    from mcp import Client

    from toolctl.server.app import ToolServer
    from toolctl.server.toolset import Selection, build_toolset

    registry = toolctl.load_project(registry_dir)
    server = ToolServer(build_toolset(registry), reload=True)

    async def names(mode: str) -> tuple[list[str], Any]:
        async with Client(server.lowlevel, mode=mode) as client:
            listed = await client.list_tools()
        return [t.name for t in listed.tools], getattr(listed, "ttl_ms", None)

    async def main() -> list[tuple[list[str], Any]]:
        seen = [await names("2026-07-28")]
        await server.swap(build_toolset(registry, Selection(names=("add", "shout"))))
        seen += [await names("2026-07-28"), await names("legacy")]
        return seen

    first, modern, legacy = anyio.run(main)
    assert "greet" in first[0] and first[1] == 0
    assert modern == (["add", "shout"], 0)
    assert legacy[0] == ["add", "shout"]
