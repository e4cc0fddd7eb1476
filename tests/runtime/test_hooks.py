"""Hooks: the seed's order, and a failing hook never fails the call."""

from __future__ import annotations

import asyncio
import logging

import pytest

from toolctl.registry import Registry
from toolctl.runtime import InputStream, RunStatus


def names(events: list) -> list[str]:
    return [e[0] for e in events]


def test_whole_input_fires_available_then_handler_then_output(reg: Registry, events: list) -> None:
    result = reg.call("hooked", {"msg": "x"})
    assert result.ok
    assert names(events) == ["onInputAvailable", "handler", "onOutput"]
    assert events[0][1] == {"input": {"msg": "x"}}
    assert events[2][1] == {"output": {"msg": "x"}}


def test_streamed_input_fires_every_hook_in_order(reg: Registry, events: list) -> None:
    stream = InputStream(reg, "hooked")
    stream.feed('{"msg": ')
    stream.feed('"x"}')
    assert stream.finish().ok
    assert names(events) == [
        "onInputStart",
        "onInputDelta",
        "onInputDelta",
        "onInputAvailable",
        "handler",
        "onOutput",
    ]
    assert events[1][1] == {"inputTextDelta": '{"msg": '}


def test_invalid_input_stops_before_on_input_available(reg: Registry, events: list) -> None:
    assert reg.call("hooked", '{"msg": 1,}').status is RunStatus.FAILED
    assert events == []


def test_failing_hooks_are_logged_and_noted(
    reg: Registry, events: list, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING, logger="toolctl.runtime.pipeline.hooks"):
        result = reg.call("broken_hooks", {"msg": "x"})
    assert result.status is RunStatus.SUCCEEDED and result.output == {"msg": "x"}
    assert len(result.notes) == 2
    assert "onInputAvailable" in result.notes[0] and "ValueError" in result.notes[0]
    assert "onOutput" in result.notes[1] and "nothing_here" in result.notes[1]
    assert "sk-abc" not in caplog.text and "sk-abc" not in " ".join(result.notes)
    assert "hook onInputAvailable" in caplog.text


def test_async_hook_through_call_and_acall(reg: Registry, events: list) -> None:
    assert reg.call("async_hook", {"msg": "a"}).ok
    assert asyncio.run(reg.acall("async_hook", {"msg": "b"})).ok
    assert [e for e in events if e[0] == "asyncOnOutput"] == [
        ("asyncOnOutput", {"msg": "a"}),
        ("asyncOnOutput", {"msg": "b"}),
    ]
