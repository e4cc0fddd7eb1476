"""tools/call through the runtime, end to end with the SDK client over stdio and HTTP."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from .serve_helpers import (
    INIT,
    INITIALIZED,
    Elicit,
    RawServe,
    Served,
    http_server,
    shout_call,
    stdio_params,
    wire,
)

pytestmark = pytest.mark.timeout(60)

Session = Callable[[Any], Awaitable[Any]]


def run_stdio(registry: Path, body: Session, **client: Any) -> Any:
    """Run ``body(client)`` against a ``toolctl serve`` subprocess (handshake revision)."""
    from mcp import Client

    async def main() -> Any:
        async with Client(stdio_params(registry), mode="legacy", **client) as c:
            return await body(c)

    return anyio.run(main)


def call_on(
    served: Served, name: str, args: dict[str, Any], answer: Elicit | None = None
) -> dict[str, Any]:
    """``call`` on a shared server."""

    async def body(c: Any) -> dict[str, Any]:
        return dump(await c.call_tool(name, args))

    out: dict[str, Any] = served.run(body, answer)
    return out


# the module's tests on the shared servers run on one xdist worker, which starts them once
shared = pytest.mark.xdist_group("calls-stdio")


@pytest.fixture
def plain(shared_stdio: Callable[..., Served]) -> Served:
    """The module's shared server, spoken to by a client without elicitation."""
    return shared_stdio(elicit=False, mode="legacy")


@pytest.fixture
def eliciting(shared_stdio: Callable[..., Served]) -> Served:
    """Another shared server, its client able to answer elicitations."""
    return shared_stdio(elicit=True, mode="legacy")


def dump(result: Any) -> dict[str, Any]:
    out: dict[str, Any] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    return out


def call(registry: Path, name: str, args: dict[str, Any], **client: Any) -> dict[str, Any]:
    async def body(c: Any) -> Any:
        return dump(await c.call_tool(name, args))

    out: dict[str, Any] = run_stdio(registry, body, **client)
    return out


@shared
def test_structured_output_is_structured_content_and_json_text(plain: Served) -> None:
    result = call_on(plain, "add", {"a": 2, "b": 3})
    assert result["isError"] is False
    assert result["structuredContent"] == {"sum": 5}
    assert json.loads(result["content"][0]["text"]) == {"sum": 5}
    assert result["_meta"]["dev.toolctl/run"]["status"] == "succeeded"


@shared
def test_invalid_arguments_are_an_error_result_the_model_can_act_on(plain: Served) -> None:
    result = call_on(plain, "add", {"a": "two"})
    assert result["isError"] is True
    text = result["content"][0]["text"]
    assert "/a" in text and "integer" in text and "'b' is a required property" in text


@shared
def test_handler_errors_are_error_results_without_secrets(plain: Served) -> None:
    result = call_on(plain, "leaky", {})
    assert result["isError"] is True
    assert "RuntimeError" in result["content"][0]["text"]
    assert "hunter2" not in json.dumps(result)


@shared
def test_unknown_tool_is_a_protocol_error(plain: Served) -> None:
    from mcp.shared.exceptions import MCPError

    async def body(c: Any) -> str:
        try:
            await c.call_tool("nope", {})
        except MCPError as exc:
            return str(exc)
        return "no error"

    assert plain.run(body) == "Unknown tool: nope"


@shared
def test_to_model_output_becomes_content_blocks(plain: Served) -> None:
    result = call_on(plain, "picture", {})
    assert [b["type"] for b in result["content"]] == ["text", "image", "text"]
    assert result["content"][1] == {
        "type": "image",
        "data": "iVBORw0KGgo=",
        "mimeType": "image/png",
    }
    assert result["content"][2]["text"] == "cat.png (image/png): https://example.com/cat.png"
    assert result["structuredContent"]["caption"] == "a cat"


def test_print_in_a_handler_never_reaches_the_json_rpc_stream(registry_dir: Path) -> None:
    server = RawServe(registry_dir)
    server.send(wire(INIT, INITIALIZED, shout_call("hi")))
    replies = [server.reply() for _ in range(2)]  # each line is JSON
    _, err = server.close()  # closes stdin: the server exits; the rest of the wire is JSON too
    assert replies[1]["result"]["content"] == [{"type": "text", "text": "HI"}]
    assert "must not reach" in err and "fd 1" in err and "child process" in err


def _elicit(
    action: str, content: dict[str, Any] | None = None, seen: list[Any] | None = None
) -> Any:
    from mcp_types import ElicitResult

    async def answer(context: Any, params: Any) -> Any:
        if seen is not None:
            seen.append(params)
        return ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return answer


@shared
def test_approval_accepted_through_elicitation_runs_the_tool(eliciting: Served) -> None:
    seen: list[Any] = []
    result = call_on(eliciting, "delete_file", {"path": "/tmp/x"}, _elicit("accept", {}, seen))
    assert result["isError"] is False
    assert result["structuredContent"] == {"deleted": "/tmp/x"}
    assert "delete_file" in seen[0].message and "/tmp/x" in seen[0].message


@shared
def test_approval_declined_through_elicitation_does_not_run(eliciting: Served) -> None:
    result = call_on(eliciting, "delete_file", {"path": "/tmp/x"}, _elicit("decline"))
    assert result["isError"] is True
    assert result["_meta"]["dev.toolctl/run"]["status"] == "declined"
    assert "declined" in result["content"][0]["text"]


@shared
def test_approval_without_elicitation_is_an_error_saying_approval_is_required(
    plain: Served,
) -> None:
    result = call_on(plain, "delete_file", {"path": "/tmp/x"})
    assert result["isError"] is True
    assert result["content"][0]["text"].startswith("Approval required")
    assert result["_meta"]["dev.toolctl/run"]["status"] == "awaiting_approval"
    assert "structuredContent" not in result


@shared
def test_suspend_resumes_in_the_same_call_through_elicitation(eliciting: Served) -> None:
    seen: list[Any] = []
    result = call_on(eliciting, "greet", {}, _elicit("accept", {"name": "Ada"}, seen))
    assert result["structuredContent"] == {"greeting": "Hello, Ada!"}
    assert seen[0].requested_schema["properties"]["name"]["type"] == "string"
    assert "What is your name?" in seen[0].message


@shared
def test_suspend_without_an_answer_returns_the_payload_and_run_id(eliciting: Served) -> None:
    result = call_on(eliciting, "greet", {}, _elicit("decline"))
    run = result["_meta"]["dev.toolctl/run"]
    assert run["status"] == "suspended"
    assert result["isError"] is True  # not a success: no structuredContent to honour a schema
    text = result["content"][0]["text"]
    assert "What is your name?" in text and f"toolctl resume {run['id']}" in text


@shared
def test_progress_is_reported_while_a_tool_runs(plain: Served) -> None:
    progress: list[tuple[float, float | None, str | None]] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append((value, total, message))

    async def body(c: Any) -> Any:
        return dump(await c.call_tool("sleepy", {"steps": 3}, progress_callback=on_progress))

    result = plain.run(body)
    assert result["structuredContent"] == {"slept": True}
    assert progress == [(0, 3, "step 0"), (1, 3, "step 1"), (2, 3, "step 2")]


def cancel_once_running(served: Served, name: str, args: dict[str, Any]) -> list[str]:
    """Call ``name``, cancel the call at its first progress notification, check the server
    still answers; the statuses of the tool's runs recorded since (the server is shared)."""
    before = len(served.statuses(name))

    async def body(c: Any) -> Any:
        started = anyio.Event()

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            started.set()

        async def slow() -> None:
            await c.call_tool(name, args, progress_callback=on_progress)

        async with anyio.create_task_group() as tg:
            tg.start_soon(slow)
            await started.wait()
            tg.cancel_scope.cancel()
        return dump(await c.call_tool("add", {"a": 1, "b": 1}))  # same connection, still served

    assert served.run(body)["structuredContent"] == {"sum": 2}
    return served.statuses(name)[before:]


@shared
def test_client_cancellation_cancels_the_run(plain: Served) -> None:
    assert cancel_once_running(plain, "sleepy", {"steps": 600}) == ["cancelled"]


@shared
def test_a_slow_tool_does_not_block_other_calls(plain: Served) -> None:
    async def body(c: Any) -> list[str]:
        finished: list[str] = []

        async def one(name: str, args: dict[str, Any]) -> None:
            await c.call_tool(name, args)
            finished.append(name)

        async with anyio.create_task_group() as tg:
            tg.start_soon(one, "blocking", {"seconds": 3})
            await anyio.sleep(0.2)
            tg.start_soon(one, "add", {"a": 1, "b": 2})
        return finished

    assert plain.run(body) == ["add", "blocking"]


def test_calls_over_http(registry_dir: Path) -> None:
    from mcp import Client

    async def main(url: str) -> list[dict[str, Any]]:
        async with Client(url, mode="legacy", elicitation_callback=_elicit("accept", {})) as c:
            return [
                dump(await c.call_tool("add", {"a": 2, "b": 2})),
                dump(await c.call_tool("add", {"a": "x", "b": 1})),
                dump(await c.call_tool("delete_file", {"path": "/p"})),
            ]

    with http_server(registry_dir) as server:
        ok, bad, approved = anyio.run(main, server.url)
    assert ok["structuredContent"] == {"sum": 4}
    assert bad["isError"] is True
    assert approved["structuredContent"] == {"deleted": "/p"}


@shared
def test_background_tools_report_progress_and_return_the_result(plain: Served) -> None:
    progress: list[str | None] = []

    async def on_progress(value: float, total: float | None, message: str | None) -> None:
        progress.append(message)

    async def body(c: Any) -> Any:
        return dump(await c.call_tool("chores", {"seconds": 1}, progress_callback=on_progress))

    result = plain.run(body)
    assert result["isError"] is False
    assert result["structuredContent"] == {"done": 1}
    assert progress and "running in the background" in str(progress[0])


@shared
def test_cancelling_a_background_call_cancels_the_run(plain: Served) -> None:
    assert cancel_once_running(plain, "chores", {"seconds": 60}) == ["cancelled"]


def test_an_unusable_run_history_is_an_error_result_saying_why(registry_dir: Path) -> None:
    config = registry_dir / "toolctl.yaml"
    config.write_text(config.read_text().replace(".toolctl/state.db", "toolctl.yaml/state.db"))
    result = call(registry_dir, "add", {"a": 1, "b": 2})
    assert result["isError"] is True
    assert "the server is misconfigured" in result["content"][0]["text"]
    assert "state.db" not in result["content"][0]["text"]  # paths stay in the server log


@shared
def test_a_failing_elicitation_leaves_the_run_awaiting_approval(eliciting: Served) -> None:
    from mcp_types import ErrorData

    async def broken(context: Any, params: Any) -> Any:
        return ErrorData(code=-32603, message="the client's form crashed")

    result = call_on(eliciting, "delete_file", {"path": "/tmp/x"}, broken)
    assert result["isError"] is True
    assert result["_meta"]["dev.toolctl/run"]["status"] == "awaiting_approval"


@shared
def test_the_request_context_comes_from_the_call_meta(plain: Served) -> None:
    async def body(c: Any) -> list[dict[str, Any]]:
        meta: Any = {"dev.toolctl/requestContext": {"userId": "ada"}}
        return [
            dump(await c.call_tool("whoami", {}, meta=meta)),
            dump(await c.call_tool("whoami", {})),
        ]

    given, missing = plain.run(body)
    assert given["structuredContent"] == {"user": "ada"}
    assert missing["isError"] is True and "userId" in missing["content"][0]["text"]
