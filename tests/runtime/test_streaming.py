"""The streaming-input API."""

from __future__ import annotations

import asyncio

import pytest

from toolctl.errors import ToolctlError
from toolctl.registry import Registry
from toolctl.runtime import InputStream, RunStatus


def test_deltas_are_transformed_per_target(reg: Registry, events: list) -> None:
    stream = InputStream(reg, "stream_tool")
    stream.start()
    for piece in ('{"ms', 'g": "hi"', "}"):
        stream.feed(piece)
    result = stream.finish()
    assert result.run_id == stream.run_id
    assert result.output == {"msg": "hi"}
    assert result.display["inputDelta"] == ['…{"ms', '…g": "hi"', "…}"]
    assert "inputDelta" not in result.transcript
    assert events[0][0] == "onInputStart"


def test_async_stream(reg: Registry, events: list) -> None:
    async def main() -> RunStatus:
        stream = InputStream(reg, "stream_tool")
        await stream.afeed('{"msg": "a"}')
        return (await stream.afinish()).status

    assert asyncio.run(main()) is RunStatus.SUCCEEDED
    assert [e[0] for e in events].count("onInputDelta") == 1


def test_broken_stream_is_an_argument_error(reg: Registry) -> None:
    stream = InputStream(reg, "stream_tool")
    stream.feed('{"msg": ')
    result = stream.finish()
    assert result.error is not None and result.error.code == "invalid_arguments"
    with pytest.raises(ToolctlError, match="already finished"):
        stream.feed("x")


def test_registry_stream(reg: Registry, events: list) -> None:
    stream = reg.stream("stream_tool")
    stream.feed('{"msg": "via registry"}')
    assert stream.finish().output == {"msg": "via registry"}
