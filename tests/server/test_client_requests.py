"""Handlers that ask the client (ctx.ask, ctx.elicit, ctx.sample, ctx.list_roots) with the
official Python SDK client: 2026-07-28 input-required round trips (several requests in one
round, several rounds) and 2025-11-25 server-to-client requests, over stdio."""

# slow: these tests start server processes

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from .test_protocols import over_stdio

pytestmark = pytest.mark.timeout(120)


def _callbacks(seen: list[str], action: str = "accept") -> dict[str, Any]:
    import mcp_types as types

    async def elicit(context: Any, params: Any) -> Any:
        seen.append("elicitation")
        return types.ElicitResult(action=action, content={"name": "Ada"})  # type: ignore[arg-type]

    async def roots(context: Any) -> Any:
        seen.append("roots")
        return types.ListRootsResult(roots=[types.Root(uri="file:///work", name="work")])  # type: ignore[arg-type]

    async def sample(context: Any, params: Any) -> Any:
        seen.append("sampling")
        text = types.TextContent(type="text", text="all good")
        return types.CreateMessageResult(role="assistant", content=text, model="probe")

    return {
        "elicitation_callback": elicit,
        "list_roots_callback": roots,
        "sampling_callback": sample,
    }


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_handler_asks_the_client_in_rounds(registry_dir: Path, mode: str) -> None:
    seen: list[str] = []

    async def body(c: Any) -> Any:
        return await c.call_tool("survey", {})

    result = over_stdio(registry_dir, body, mode=mode, **_callbacks(seen))
    assert result.is_error is False, result.content
    assert result.structured_content == {
        "name": "Ada",
        "roots": ["file:///work"],
        "summary": "all good",
    }
    # round 1 asked the form and the roots, round 2 the model; nothing was asked twice
    assert sorted(seen[:2]) == ["elicitation", "roots"] and seen[2:] == ["sampling"]


def test_the_handler_gets_a_declined_form_and_decides(registry_dir: Path) -> None:
    seen: list[str] = []

    async def body(c: Any) -> Any:
        return await c.call_tool("survey", {})

    result = over_stdio(registry_dir, body, **_callbacks(seen, action="decline"))
    assert result.structured_content["summary"] == "the user declined"
    assert "sampling" not in seen


def test_a_client_without_the_capability_gets_32021(registry_dir: Path) -> None:
    from mcp.shared.exceptions import MCPError

    async def body(c: Any) -> Any:
        try:
            await c.call_tool("survey", {})
        except MCPError as exc:
            return exc.error
        return None

    error = over_stdio(registry_dir, body)
    assert error is not None and error.code == -32021
    assert set(error.data["requiredCapabilities"]) == {"elicitation", "roots"}


def test_a_background_tool_asks_before_it_is_queued(registry_dir: Path) -> None:
    # The approval, then the inputRequests, as 2025-11-25 elicitation requests before the run
    # exists in a worker, whose result quotes the answer. (2026-07-28 input-required rounds:
    # test_tasks.py::test_questions_before_the_queue_then_the_task, conformance
    # tasks-mrtr-composition.)
    seen: list[str] = []

    async def body(c: Any) -> Any:
        return await c.call_tool("welcome_later", {})

    result = over_stdio(registry_dir, body, mode="legacy", **_callbacks(seen))
    assert result.is_error is False, result.content
    assert result.content[0].text == "Hello, Ada!" and seen == ["elicitation", "elicitation"]
