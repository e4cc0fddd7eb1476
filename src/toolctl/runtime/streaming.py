"""Streaming input: a model's tool-call arguments arriving as text deltas.

>>> stream = InputStream(registry, "get_weather")       # fires onInputStart
>>> stream.feed('{"city": "Pa')                          # fires onInputDelta
>>> stream.feed('ris"}')
>>> result = stream.finish()                             # parses, then the whole pipeline

``afeed``/``afinish`` are the async forms. Display and transcript transforms of the
``inputDelta`` phase are collected under ``result.display["inputDelta"]`` (a list).
"""

from __future__ import annotations

from typing import Any

from toolctl.errors import ToolctlError
from toolctl.runtime import calls, jsondata
from toolctl.runtime.pipeline import Call, drive
from toolctl.runtime.result import RunResult


class InputStream:
    """One tool call whose arguments arrive in pieces."""

    def __init__(self, registry: Any, name: str, *, store: Any = None, **options: Any) -> None:
        self._registry = registry
        self._name = name
        self._store = store
        self._options = options
        self._chunks: list[str] = []
        self._size = 0
        self._sync_call = self._make(True)
        self._started = False
        self._done = False

    def _make(self, sync: bool) -> Call:
        c = calls.new_call(self._registry, self._name, self._store, sync, **self._options)
        if getattr(self, "_sync_call", None) is not None:
            prev = self._sync_call
            c.run_id, c.notes, c.display, c.transcript = (
                prev.run_id,
                prev.notes,
                prev.display,
                prev.transcript,
            )
        return c

    @property
    def run_id(self) -> str:
        return self._sync_call.run_id

    async def _start(self, c: Call) -> None:
        if not self._started:
            self._started = True
            await c.fire("onInputStart")

    async def _feed(self, c: Call, delta: str) -> None:
        if self._done:
            raise ToolctlError("this input stream is already finished")
        self._size += len(delta.encode("utf-8", "surrogatepass"))
        if self._size > jsondata.MAX_BYTES:
            raise ToolctlError(f"streamed arguments too large (> {jsondata.MAX_BYTES} bytes)")
        await self._start(c)
        self._chunks.append(delta)
        c.phase("inputDelta", delta)
        await c.fire("onInputDelta", inputTextDelta=delta)

    def start(self) -> None:
        """Fire onInputStart now (otherwise the first delta does)."""
        drive(self._start(self._sync_call))

    def feed(self, delta: str) -> None:
        """Add a text delta of the JSON arguments."""
        drive(self._feed(self._sync_call, delta))

    async def afeed(self, delta: str) -> None:
        await self._feed(self._make(False), delta)

    def finish(self) -> RunResult:
        """Parse the whole text and run the call."""
        drive(self._start(self._sync_call))
        self._done = True
        return drive(self._sync_call.run("".join(self._chunks)))

    async def afinish(self) -> RunResult:
        c = self._make(False)
        await self._start(c)
        self._done = True
        return await c.run("".join(self._chunks))
