"""The call pipeline: every terminal state a plain call can reach, and what gets recorded."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from toolctl.errors import ToolctlError, UnknownToolError
from toolctl.registry import Registry
from toolctl.runtime import RunStatus, api
from toolctl.runtime.history.sqlite import SqliteStore


def row(reg: Registry, run_id: str) -> Any:
    store = api.resolve_store(reg)
    assert isinstance(store, SqliteStore)
    return store.get(run_id)


def test_success_returns_output_model_output_and_records_the_run(reg: Registry) -> None:
    result = reg.call("add", {"a": 1, "b": 2})
    assert result.status is RunStatus.SUCCEEDED
    assert result.output == {"sum": 3}
    assert result.model_output == {"type": "text", "value": "sum is 3"}
    assert result.display == {"input": {"a": 1, "b": 2}, "output": {"sum": 3}}
    assert result.error is None and result.duration_ms is not None
    rec = row(reg, result.run_id)
    assert rec.status == "succeeded"
    assert rec.input == {"a": 1, "b": 2} and rec.output == {"sum": 3}
    assert rec.raw_input is None and rec.tool_digest == reg.get("add").digest


def test_json_string_input_and_default_model_outputs(reg: Registry) -> None:
    assert reg.call("text", '{"name": "Ada"}').model_output == {
        "type": "text",
        "value": "hello Ada",
    }
    assert reg.call("echo", {"msg": "x"}).model_output == {"type": "json", "value": {"msg": "x"}}


def test_async_handler_gets_context_through_call_and_acall(reg: Registry) -> None:
    result = reg.call("aadd", {"a": 2, "b": 3})
    assert result.output == {"sum": 5, "run": result.run_id}
    result = asyncio.run(reg.acall("aadd", {"a": 2, "b": 3}))
    assert result.output == {"sum": 5, "run": result.run_id}


def test_sync_handler_through_acall(reg: Registry) -> None:
    result = asyncio.run(reg.acall("add", {"a": 1, "b": 1}))
    assert result.output == {"sum": 2}


def test_request_context_is_validated_and_given_to_the_handler(reg: Registry) -> None:
    ok = reg.call("ctx", {}, context={"userId": "u1"})
    assert ok.output["context"] == {"userId": "u1"} and ok.output["tool"] == "ctx"
    bad = reg.call("ctx", {}, context={"token": "s3cr3t-token-value"})
    assert bad.status is RunStatus.FAILED and bad.error is not None
    assert bad.error.code == "invalid_context"
    assert "userId" in bad.error.text() and "s3cr3t" not in json.dumps(bad.to_dict())
    assert row(reg, bad.run_id).status == "failed"
    # not JSON at all: a JSON text with a duplicate key, an object holding NaN
    for context in ('{"userId": "a", "userId": "b"}', {"userId": float("nan")}):
        err = reg.call("ctx", {}, context=context).error
        assert err is not None and err.code == "invalid_context"


@pytest.mark.parametrize(
    ("text", "fragment"),
    [
        ('{"msg": "a", "msg": "/etc/shadow"}', "duplicate key 'msg'"),
        ('{"count": NaN}', "non-finite number NaN"),
        ('{"count": Infinity}', "non-finite number Infinity"),
        ('{"count": 1e400}', "non-finite"),
        ('{"msg": "\\ud800"}', "lone surrogate"),
        ('{"count": ' + "1" * 5000 + "}", "digits is too long"),
        ("[" * 300 + "]" * 300, "nested too deeply"),
        ("[1, 2]", "must be a JSON object"),
        ("{oops", "invalid JSON in arguments"),
    ],
)
def test_hostile_arguments_are_rejected_before_the_handler(
    reg: Registry, events: list[Any], text: str, fragment: str
) -> None:
    result = reg.call("echo", text)
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "invalid_arguments"
    assert fragment in result.error.message
    assert events == []  # the handler never ran
    assert row(reg, result.run_id).status == "failed"


def test_oversized_arguments(reg: Registry) -> None:
    result = reg.call("echo", json.dumps({"msg": "x" * (1024 * 1024 + 10)}))
    assert result.error is not None and "too large" in result.error.message


def test_python_values_are_checked_like_json(reg: Registry) -> None:
    result = reg.call("echo", {"count": float("nan")})
    assert result.error is not None and result.error.code == "invalid_arguments"
    result = reg.call("echo", {"msg": ("not", "json")})
    assert result.error is not None and "tuple is not a JSON type" in result.error.message
    # the message points at the value (RFC 6901: "/" and "~" in a key are escaped)
    result = reg.call("echo", {"msg": {"a/b~c": [float("inf")]}})
    assert result.error is not None and result.error.message.endswith(" at /msg/a~1b~0c/0")


def test_invalid_input_is_a_tool_error_a_model_can_act_on(reg: Registry) -> None:
    result = reg.call("add", {"a": "x", "api_key": "sk-abcdefghijklmnopqrstuvwx"})
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "invalid_input"
    paths = {d["path"] for d in result.error.details}
    assert paths == {"/a", "/"}
    assert "Provided arguments" in result.error.message
    assert "sk-abc" not in result.error.message and "[REDACTED]" in result.error.message
    assert result.model_output is not None and "/a:" in result.model_output["value"]


def test_hostile_pattern_finishes_with_an_error(reg: Registry) -> None:
    result = reg.call("redos", {"msg": "a" * 30 + "!"})
    assert result.error is not None and result.error.code == "invalid_input"


def test_patterns_have_ecma_semantics(reg: Registry) -> None:
    assert reg.call("ecma", {"msg": "abc\n"}).status is RunStatus.FAILED
    assert reg.call("ecma", {"msg": "abc"}).status is RunStatus.SUCCEEDED


def test_deep_input_against_recursive_schema_is_a_clear_error(reg: Registry) -> None:
    node: dict[str, Any] = {}
    for _ in range(60):
        node = {"child": node}
    assert reg.call("tree", {"msg": node}).status is RunStatus.SUCCEEDED
    deep: dict[str, Any] = {}
    for _ in range(300):
        deep = {"child": deep}
    result = reg.call("tree", {"msg": deep})
    assert result.error is not None and "nested too deeply" in result.error.message


def test_handler_exception_is_redacted_everywhere(reg: Registry) -> None:
    result = reg.call("fail", {})
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "handler_error"
    assert "RuntimeError" in result.error.message
    assert "hunter2" not in json.dumps(result.to_dict())
    assert "hunter2" not in json.dumps(row(reg, result.run_id).public())


def test_output_validation_modes(reg: Registry) -> None:
    strict = reg.call("wrong_output", {})
    assert strict.status is RunStatus.FAILED and strict.error is not None
    assert strict.error.code == "invalid_output" and strict.error.details[0]["path"] == "/sum"
    assert row(reg, strict.run_id).error["code"] == "invalid_output"
    warn = reg.call("wrong_output_warn", {})
    assert warn.status is RunStatus.SUCCEEDED and warn.output == {"sum": "not a number"}
    assert any("does not match outputSchema" in n for n in warn.notes)
    assert row(reg, warn.run_id).notes == warn.notes
    off = reg.call("wrong_output_off", {})
    assert off.status is RunStatus.SUCCEEDED and not off.notes


@pytest.mark.parametrize(
    ("tool", "fragment"),
    [
        ("nan_output", "tool output is not valid JSON"),
        ("set_output", "tool output is not valid JSON"),
        ("big_output", "output too large"),
    ],
)
def test_unusable_output_fails_the_run_and_the_row_says_so(
    reg: Registry, tool: str, fragment: str
) -> None:
    result = reg.call(tool, {})
    assert result.status is RunStatus.FAILED and result.error is not None
    assert fragment in result.error.message
    rec = row(reg, result.run_id)
    assert rec.status == "failed" and rec.output is None


def test_missing_handlers(reg: Registry) -> None:
    none = reg.call("no_handler", {})
    assert none.error is not None and none.error.code == "no_handler"
    missing = reg.call("missing_handler", {})
    assert missing.error is not None and missing.error.code == "handler_not_found"
    assert "nothing_here" in missing.error.message
    assert row(reg, missing.run_id).status == "failed"
    crashing = reg.call("crashing_import", {})
    assert crashing.error is not None and crashing.error.code == "handler_not_found"
    assert "ValueError: configuration missing" in crashing.error.message


def test_unknown_and_disabled_tools_are_caller_errors(reg: Registry) -> None:
    with pytest.raises(UnknownToolError, match="did you mean echo"):
        reg.call("ecko", {})
    with pytest.raises(ToolctlError, match="disabled"):
        reg.call("disabled", {})


def test_history_off_records_nothing(reg: Registry) -> None:
    result = reg.call("add", {"a": 1, "b": 2}, store=False)
    assert result.ok
    assert not (reg.project.state_path).exists()  # type: ignore[union-attr]


def test_progress_and_observe(reg: Registry, caplog: pytest.LogCaptureFixture) -> None:
    seen: list[tuple[float, float | None, str | None]] = []
    with caplog.at_level("INFO", logger="toolctl.tool.progress"):
        result = reg.call("progress", {}, on_progress=lambda v, t, m: seen.append((v, t, m)))
    assert result.ok
    assert seen == [(1, 3, "step 1"), (2, 3, "step 2"), (3, 3, "step 3")]
    assert "working" in caplog.text and "sk-abc" not in caplog.text


def test_cancel_with_ctrl_c_records_cancelled(reg: Registry) -> None:
    from toolctl.runtime import RunCancelled

    with pytest.raises(RunCancelled) as info:
        reg.call("interrupt", {})
    assert info.value.result.status is RunStatus.CANCELLED
    assert row(reg, info.value.result.run_id).status == "cancelled"


def test_cancelling_acall_records_cancelled(reg: Registry) -> None:
    async def main() -> str:
        run_id = "cancelme0000000000"
        task = asyncio.ensure_future(reg.acall("async_sleep", {"s": 5}, run_id=run_id))
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return run_id

    run_id = asyncio.run(main())
    assert row(reg, run_id).status == "cancelled"


def test_huge_invalid_input_gets_a_capped_error_report(make_registry) -> None:  # type: ignore[no-untyped-def]
    reg = make_registry(
        {
            "list.yaml": (
                "toolctl: 1\nname: nums\ndescription: Numbers.\nhandler: rt_handlers:echo\n"
                "inputSchema:\n  type: object\n"
                "  properties: {xs: {type: array, items: {type: integer}}}\n"
            )
        }
    )
    result = reg.call("nums", {"xs": ["x"] * 200_000})
    assert result.error is not None and result.error.code == "invalid_input"
    assert 0 < len(result.error.details) <= 20
    assert len(result.error.message) < 1000


def test_system_exit_in_a_handler_is_a_failed_run_not_an_exit(reg: Registry) -> None:
    # A handler cannot end the process that runs it (the CLI, the server): SystemExit is an
    # ordinary failure of the handler, recorded and returned.
    result = reg.call("exits", {}, run_id="exit00000000000000")
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.message == "SystemExit: 3"
    rec = row(reg, "exit00000000000000")
    assert rec.status == "failed" and rec.error["message"] == "SystemExit: 3"
