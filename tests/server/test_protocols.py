"""Protocols 2026-07-28 and 2025-11-25 side by side, with the SDK client over a real stdio
subprocess and a real HTTP server: negotiation, tools/list, calls, input-required round trips
(approval, suspend/resume) and log notifications."""

# slow: these tests start server processes

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import anyio
import pytest

from .serve_helpers import HttpServer, Served, http_server, run_serve, stdio_params

pytestmark = pytest.mark.timeout(120)
MODERN, LEGACY = "2026-07-28", "2025-11-25"
# The tests that only send requests to a server with the defaults share one per client kind
# (tests/server/conftest.py: shared_http_server, shared_stdio).
shared = pytest.mark.xdist_group("protocols-shared")
Shared = Callable[..., Served]
Body = Callable[[Any], Awaitable[Any]]


def over_stdio(registry: Path, body: Body, *args: str, **client: Any) -> Any:
    from mcp import Client

    async def main() -> Any:
        async with Client(stdio_params(registry, *args), **client) as c:
            return await body(c)

    return anyio.run(main)


def over_http(url: str, body: Body, **client: Any) -> Any:
    from mcp import Client

    async def main() -> Any:
        async with Client(url, **client) as c:
            return await body(c)

    return anyio.run(main)


def _elicit(action: str, content: dict[str, Any] | None = None, seen: list[Any] | None = None):  # type: ignore[no-untyped-def]
    from mcp_types import ElicitResult

    async def answer(context: Any, params: Any) -> Any:
        if seen is not None:
            seen.append(params)
        return ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return answer


async def _version_and_names(c: Any) -> tuple[str, list[str], Any]:
    listed = await c.list_tools()
    return c.protocol_version, [t.name for t in listed.tools], listed


@shared
def test_each_client_gets_its_revision_the_newer_by_default(
    registry_dir: Path, shared_http_server: HttpServer
) -> None:
    modern = over_stdio(registry_dir, _version_and_names)
    legacy = over_stdio(registry_dir, _version_and_names, mode="legacy")
    modern_http = over_http(shared_http_server.url, _version_and_names)
    legacy_http = over_http(shared_http_server.url, _version_and_names, mode="legacy")
    assert modern[0] == modern_http[0] == MODERN
    assert legacy[0] == legacy_http[0] == LEGACY
    names = legacy[1]
    assert names == sorted(names) and modern[1] == names == modern_http[1] == legacy_http[1]
    listed = modern[2]
    assert listed.ttl_ms == 300_000 and listed.cache_scope == "public"


@shared
def test_a_call_in_2026_07_28_honours_the_contract(shared_stdio: Shared) -> None:
    async def body(c: Any) -> Any:
        await c.list_tools()
        return await c.call_tool("add", {"a": 2, "b": 3}), await c.call_tool("tally", {})

    added, tally = shared_stdio(elicit=False).run(body)
    assert added.structured_content == {"sum": 5} and added.is_error is False
    assert tally.structured_content == {"label": "items", "count": 5}


@shared
@pytest.mark.parametrize("transport", ["stdio", "http"])
def test_approval_is_an_input_required_round_trip(
    shared_stdio: Shared, transport: str, request: pytest.FixtureRequest
) -> None:
    seen: list[Any] = []

    async def body(c: Any) -> Any:
        assert c.protocol_version == MODERN
        return await c.call_tool("delete_file", {"path": "/tmp/x"})

    kwargs = {"elicitation_callback": _elicit("accept", {}, seen)}
    if transport == "stdio":
        result = shared_stdio(elicit=True).run(body, kwargs["elicitation_callback"])
    else:
        result = over_http(request.getfixturevalue("shared_http_server").url, body, **kwargs)
    assert result.is_error is False
    assert result.structured_content == {"deleted": "/tmp/x"}
    assert "delete_file" in seen[0].message and "/tmp/x" in seen[0].message


@shared
def test_a_client_without_elicitation_gets_an_error_naming_the_run(shared_stdio: Shared) -> None:
    async def body(c: Any) -> Any:
        return await c.call_tool("delete_file", {"path": "/tmp/x"})

    result = shared_stdio(elicit=False).run(body)
    assert result.is_error is True
    assert result.meta["dev.toolctl/run"]["status"] == "awaiting_approval"


@shared
def test_a_declined_approval_does_not_run(shared_stdio: Shared) -> None:
    async def body(c: Any) -> Any:
        return await c.call_tool("delete_file", {"path": "/tmp/x"})

    result = shared_stdio(elicit=True).run(body, _elicit("decline"))
    assert result.is_error is True
    assert result.meta["dev.toolctl/run"]["status"] == "declined"


@shared
def test_suspend_resumes_through_an_input_required_round_trip(shared_stdio: Shared) -> None:
    seen: list[Any] = []

    async def body(c: Any) -> Any:
        await c.list_tools()
        return await c.call_tool("greet", {})

    result = shared_stdio(elicit=True).run(body, _elicit("accept", {"name": "Ada"}, seen))
    assert result.structured_content == {"greeting": "Hello, Ada!"}
    assert seen[0].requested_schema["properties"]["name"]["type"] == "string"
    assert "What is your name?" in seen[0].message


async def _first_round(c: Any, name: str, args: dict[str, Any]) -> Any:
    from mcp_types import InputRequiredResult

    first = await c.session.call_tool(name, args, allow_input_required=True)
    assert isinstance(first, InputRequiredResult)
    return first


def _accept(key: str, content: dict[str, Any] | None = None) -> dict[str, Any]:
    from mcp_types import ElicitResult

    return {key: ElicitResult(action="accept", content=content or {})}


@shared
def test_a_tampered_follow_up_is_refused(shared_stdio: Shared) -> None:
    from mcp.shared.exceptions import MCPError

    async def body(c: Any) -> list[str]:
        first = await _first_round(c, "delete_file", {"path": "/tmp/x"})
        state = first.request_state
        errors = []
        for args, sent in (
            ({"path": "/etc/passwd"}, state),  # other arguments
            ({"path": "/tmp/x"}, state[:-4] + "AAAA"),  # an edited state
        ):
            try:
                await c.session.call_tool(
                    "delete_file",
                    args,
                    input_responses=_accept("approval"),
                    request_state=sent,
                    allow_input_required=True,
                )
                errors.append("accepted")
            except MCPError as exc:
                errors.append(str(exc))
        return errors

    errors = shared_stdio(elicit=True).run(body, _elicit("accept", {}))
    assert errors == ["Invalid or expired requestState"] * 2


def test_a_follow_up_for_a_changed_tool_is_refused(registry_dir: Path) -> None:
    tool_file = registry_dir / "tools.d" / "flow.yaml"

    async def body(c: Any) -> Any:
        first = await _first_round(c, "delete_file", {"path": "/tmp/x"})
        text = tool_file.read_text()
        tool_file.write_text(text.replace("Delete a file", "Delete one file"))
        for _ in range(100):  # the server reloads the changed file
            listed = await c.list_tools()
            if any("Delete one file" in (t.description or "") for t in listed.tools):
                break
            await anyio.sleep(0.1)
        return await c.session.call_tool(
            "delete_file",
            {"path": "/tmp/x"},
            input_responses=_accept("approval"),
            request_state=first.request_state,
            allow_input_required=True,
        )

    result = over_stdio(registry_dir, body, "--reload", elicitation_callback=_elicit("accept", {}))
    assert result.is_error is True
    assert "changed since run" in result.content[0].text


def test_any_replica_sharing_the_history_takes_the_follow_up(registry_dir: Path) -> None:
    with http_server(registry_dir) as one, http_server(registry_dir) as two:
        asks = {"elicitation_callback": _elicit("accept", {})}
        first = over_http(one.url, lambda c: _first_round(c, "greet", {}), **asks)

        async def follow(c: Any) -> Any:
            await c.list_tools()
            return await c.session.call_tool(
                "greet",
                {},
                input_responses=_accept("resume", {"name": "Grace"}),
                request_state=first.request_state,
            )

        result = over_http(two.url, follow, **asks)
    assert result.structured_content == {"greeting": "Hello, Grace!"}


def _collect_logs(level: str | None, mode: str = "auto", **extra: Any) -> Any:
    logs: list[Any] = []

    async def on_log(params: Any) -> None:
        logs.append(params)

    async def body(c: Any) -> Any:
        if level is not None and c.protocol_version == LEGACY:
            with warnings.catch_warnings():  # the SDK marks logging deprecated in 2026-07-28
                warnings.simplefilter("ignore")
                await c.set_logging_level(level)
        await c.call_tool("chatty", {"topic": "rain"})
        return logs

    client: dict[str, Any] = {"logging_callback": on_log, "mode": mode}
    if level is not None and mode != "legacy":
        client["log_level"] = level
    return client, body


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_tool_log_lines_reach_the_client_at_its_level(registry_dir: Path, mode: str) -> None:
    client, body = _collect_logs("info", mode)
    logs = over_stdio(registry_dir, body, **client)
    messages = [(entry.level, entry.data["message"].split(" {")[0]) for entry in logs]
    assert messages == [("info", "working on rain"), ("warning", "trouble with rain")]
    assert logs[0].logger == "toolctl.tool.chatty" and logs[0].data["fields"] == {"step": 1}
    assert "hunter2" not in repr(logs)


def test_no_log_lines_without_a_level_and_python_logging_is_opt_in(registry_dir: Path) -> None:
    client, body = _collect_logs(None, "legacy")
    assert over_stdio(registry_dir, body, **client) == []
    client, body = _collect_logs("warning", "legacy")
    logs = over_stdio(registry_dir, body, "--forward-logging", **client)
    assert [entry.data["message"].split(" {")[0] for entry in logs] == [
        "trouble with rain",
        "plain logging about rain",
    ]


def _modern_post(port: int, body: dict[str, Any], **headers: str) -> tuple[int, Any]:
    import http.client
    import json

    sent = {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "MCP-Protocol-Version": MODERN,
        **{k.replace("_", "-"): v for k, v in headers.items()},
    }
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    try:
        conn.request("POST", "/mcp", body=json.dumps(body), headers=sent)
        response = conn.getresponse()
        text = response.read().decode()
    finally:
        conn.close()
    data = [ln[5:].strip() for ln in text.splitlines() if ln.startswith("data:")]
    return response.status, json.loads(data[-1] if data else text)


def _modern_call(name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A stateless (2026-07-28) ``tools/call`` request, its client envelope in ``_meta``."""
    envelope = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientInfo": {"name": "probe", "version": "0"},
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    return {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments, "_meta": envelope},
    }


@shared
def test_routing_headers_must_match_the_request(shared_http_server: HttpServer) -> None:
    call = _modern_call("add", {"a": 1, "b": 2})
    port = shared_http_server.port
    _, good = _modern_post(port, call, Mcp_Method="tools/call", Mcp_Name="add")
    _, bad = _modern_post(port, call, Mcp_Method="tools/call", Mcp_Name="shout")
    assert good["result"]["structuredContent"] == {"sum": 3}
    assert bad["error"]["code"] == -32020 and "mcp-name" in bad["error"]["message"]


@shared
def test_routing_header_values_are_compared_without_surrounding_whitespace(
    shared_http_server: HttpServer,
) -> None:
    call = _modern_call("add", {"a": 1, "b": 2})
    port = shared_http_server.port
    _, padded = _modern_post(port, call, Mcp_Method="tools/call", Mcp_Name="  add \t ")
    _, other = _modern_post(port, call, Mcp_Method="tools/call", Mcp_Name="  ad d ")
    assert padded["result"]["structuredContent"] == {"sum": 3}
    assert other["error"]["code"] == -32020


def test_a_bad_request_state_key_is_a_usage_error(registry_dir: Path) -> None:
    done = run_serve(registry_dir, env={"TOOLCTL_REQUEST_STATE_KEY": "not-base64!"})
    assert done.returncode == 2
    assert "TOOLCTL_REQUEST_STATE_KEY must be base64 keys" in done.stderr
    assert "Traceback" not in done.stderr


def test_an_unknown_log_level_is_a_usage_error(registry_dir: Path) -> None:
    done = run_serve(registry_dir, "--log-level", "verbose")
    assert done.returncode == 2
    assert "--log-level" in done.stderr and "'verbose' is not one of" in done.stderr
    assert "Traceback" not in done.stderr


@shared
def test_x_mcp_header_parameters_are_mirrored_and_checked(shared_http_server: HttpServer) -> None:
    call = _modern_call("route", {"region": "eu"})
    headers = {"Mcp_Method": "tools/call", "Mcp_Name": "route"}
    server = shared_http_server
    status, bad = _modern_post(server.port, call, **headers, Mcp_Param_Region="us")
    # the SDK client mirrors the parameter into Mcp-Param-Region itself
    good = over_http(server.url, lambda c: c.call_tool("route", {"region": "eu"}))
    # a tool that declares no header has none to check (a stray one is ignored)
    plain = {"Mcp_Method": "tools/call", "Mcp_Name": "add", "Mcp_Param_Region": "us"}
    added = _modern_post(server.port, _modern_call("add", {"a": 1, "b": 2}), **plain)
    assert status == 400 and bad["error"]["code"] == -32020
    assert good.structured_content == {"region": "eu"}
    assert added[0] == 200 and added[1]["result"]["structuredContent"] == {"sum": 3}


def test_only_a_tool_declaring_a_header_has_its_schema_checked_against_headers(
    registry_dir: Path,
) -> None:
    import toolctl
    from toolctl.server.toolset import build_toolset

    toolset = build_toolset(toolctl.load_project(registry_dir))
    route = toolset.header_schema("route")
    assert route is not None and route["properties"]["region"]["x-mcp-header"] == "Region"
    assert toolset.header_schema("add") is None  # no x-mcp-header anywhere in its schema
    assert toolset.header_schema("no-such-tool") is None


_KEYS_TOOL = """\
toolctl: 1
name: keys
description: The argument names, sorted.
handler: keytools:keys
inputSchema: {type: object, additionalProperties: {type: integer}}
outputSchema: {type: array, items: {type: string}}
"""


def test_a_non_object_output_reaches_sdk_clients_as_each_revision_lists_it(
    registry_dir: Path,
) -> None:
    # 2026-07-28 lists any outputSchema and returns the array as structuredContent; 2025-11-25
    # lists none (its root must be an object) and returns the output as text only. The SDK
    # client reads both (and checks structuredContent against the schema it listed).
    (registry_dir / "keytools.py").write_text("def keys(data):\n    return sorted(data)\n")
    (registry_dir / "tools.d" / "keys.yaml").write_text(_KEYS_TOOL)

    async def body(c: Any) -> Any:
        listed = await c.list_tools()
        (tool,) = [t for t in listed.tools if t.name == "keys"]
        return tool.output_schema, await c.call_tool("keys", {"b": 1, "a": 2})

    runs = {"stdio " + mode: over_stdio(registry_dir, body, mode=mode) for mode in MODES}
    with http_server(registry_dir) as server:
        runs |= {"http " + mode: over_http(server.url, body, mode=mode) for mode in MODES}
    for where, (schema, result) in runs.items():
        assert result.is_error is False, where
        assert result.content[0].text == '["a", "b"]', where
        if where.endswith("legacy"):
            assert schema is None and result.structured_content is None, where
        else:
            assert schema == {"type": "array", "items": {"type": "string"}}, where
            assert result.structured_content == ["a", "b"], where


MODES = ("auto", "legacy")


def _answers(*answers: tuple[str, dict[str, Any] | None], seen: list[Any]):  # type: ignore[no-untyped-def]
    """An elicitation callback giving ``answers`` in turn (the last one repeated)."""
    from mcp_types import ElicitResult

    async def answer(context: Any, params: Any) -> Any:
        seen.append(params)
        action, content = answers[min(len(seen), len(answers)) - 1]
        return ElicitResult(action=action, content=content)  # type: ignore[arg-type]

    return answer


@shared
@pytest.mark.parametrize("mode", ["auto", "legacy"])
@pytest.mark.parametrize("action", ["decline", "cancel"])
@pytest.mark.parametrize("tool", ["delete_file", "greet"])
def test_decline_or_cancel_ends_the_round_trip_in_both_revisions(
    shared_stdio: Shared, tool: str, action: str, mode: str
) -> None:
    seen: list[Any] = []

    async def body(c: Any) -> Any:
        return await c.call_tool(tool, {"path": "/tmp/x"} if tool == "delete_file" else {})

    callback = _answers((action, None), seen=seen)
    result = shared_stdio(elicit=True, mode=mode).run(body, callback)
    assert len(seen) == 1  # asked once, never again
    assert result.is_error is True
    run = result.meta["dev.toolctl/run"]
    expected = {"delete_file": "declined" if action == "decline" else "awaiting_approval"}
    assert run["status"] == expected.get(tool, "suspended")
    if run["status"] != "declined":  # still pending: the text says how to continue it
        assert run["id"] in result.content[0].text


@shared
def test_refused_resume_data_asks_again_showing_the_question_and_the_problem(
    shared_stdio: Shared,
) -> None:
    seen: list[Any] = []

    async def body(c: Any) -> Any:
        return await c.call_tool("greet", {})

    callback = _answers(("accept", {}), ("accept", {"name": "Ada"}), seen=seen)
    result = shared_stdio(elicit=True).run(body, callback)
    assert result.structured_content == {"greeting": "Hello, Ada!"}
    again = seen[1].message
    assert "What is your name?" in again and "null" not in again
    assert "does not match its resumeSchema" in again
