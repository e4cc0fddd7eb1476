"""An MCP result honours the tool's declared contract: the SDK client, which validates
``structuredContent`` against the listed ``outputSchema`` and raises, is the referee."""

# slow: these tests start server processes

from __future__ import annotations

from pathlib import Path
from typing import Any

import anyio
import pytest

from .serve_helpers import http_server, stdio_params

pytestmark = pytest.mark.timeout(90)


async def _listed_then_called(c: Any, name: str, args: dict[str, Any]) -> Any:
    await c.list_tools()  # the client validates results against what it listed
    return await c.call_tool(name, args)


def call_stdio(registry: Path, name: str, args: dict[str, Any], **client: Any) -> Any:
    from mcp import Client

    async def main() -> Any:
        async with Client(stdio_params(registry), mode="legacy", **client) as c:
            return await _listed_then_called(c, name, args)

    return anyio.run(main)


def _text(result: Any) -> str:
    return str(result.content[0].text)


def test_a_background_result_is_the_model_view_never_the_transcript(registry_dir: Path) -> None:
    result = call_stdio(registry_dir, "tally", {"label": "apples"})
    assert result.is_error is False
    # the transcript keeps only {"label"}; the outputSchema requires count too
    assert result.structured_content == {"label": "apples", "count": 6}


def test_a_background_result_without_a_model_view_is_a_success_saying_so(
    registry_dir: Path,
) -> None:
    # The transcript suppresses the output: no outputSchema is listed (TX224), and the result
    # is a success that says the output is not kept, never a failure.
    result = call_stdio(registry_dir, "vault", {})
    assert result.is_error is False
    assert result.structured_content is None
    run = result.meta["dev.toolctl/run"]
    assert run["status"] == "succeeded"
    assert "finished" in _text(result) and "not kept" in _text(result)


def test_output_breaking_the_schema_under_warn_is_an_error_result(registry_dir: Path) -> None:
    result = call_stdio(registry_dir, "sloppy", {})
    assert result.is_error is True and result.structured_content is None
    assert "does not match its outputSchema" in _text(result) and "/total" in _text(result)
    assert result.meta["dev.toolctl/run"]["id"] in _text(result)


def test_a_suspended_run_without_elicitation_is_an_error_with_the_run_id(
    registry_dir: Path,
) -> None:
    result = call_stdio(registry_dir, "greet", {})
    assert result.is_error is True and result.structured_content is None
    run = result.meta["dev.toolctl/run"]
    assert run["status"] == "suspended"
    assert f"toolctl resume {run['id']}" in _text(result)


def test_the_contract_holds_over_http_too(registry_dir: Path) -> None:
    from mcp import Client

    with http_server(registry_dir) as server:

        async def main() -> list[Any]:
            async with Client(server.url, mode="legacy") as c:
                return [
                    await _listed_then_called(c, "tally", {"label": "pears"}),
                    await c.call_tool("sloppy", {}),
                ]

        tally, sloppy = anyio.run(main)
    assert tally.structured_content == {"label": "pears", "count": 5}
    assert sloppy.is_error is True
