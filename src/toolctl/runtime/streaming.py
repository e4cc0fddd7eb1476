"""Streaming input: a model's tool-call arguments arriving as text deltas.

>>> stream = InputStream(registry, "get_weather")       # fires onInputStart
>>> stream.feed('{"city": "Pa')                          # fires onInputDelta
>>> stream.feed('ris"}')
>>> result = stream.finish()                             # parses, then the whole pipeline

``afeed``/``afinish`` are the async forms. Display and transcript transforms of the
``inputDelta`` phase are collected under ``result.display["inputDelta"]`` (a list).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from toolctl.errors import ToolctlError
from toolctl.runtime import jsondata
from toolctl.runtime.options import CallOptions
from toolctl.runtime.options import build as build_options
from toolctl.runtime.pipeline import start as calls
from toolctl.runtime.result import RunResult
from toolctl.runtime.sync import run_sync

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from toolctl.runtime.options import CallKeywords
    from toolctl.runtime.source import ToolSource


class InputStream:
    """One tool call whose arguments arrive in pieces."""

    def __init__(
        self,
        registry: ToolSource,
        name: str,
        options: CallOptions | None = None,
        **keywords: Unpack[CallKeywords],
    ) -> None:
        self._call = calls.new_call(registry, name, build_options(options, keywords))
        self._chunks: list[str] = []
        self._size = 0
        self._started = False
        self._done = False

    @property
    def run_id(self) -> str:
        return self._call.run_id

    async def _start(self) -> None:
        if not self._started:
            self._started = True
            await self._call.fire("onInputStart")

    async def afeed(self, delta: str) -> None:
        """Add a text delta of the JSON arguments."""
        if self._done:
            raise ToolctlError("this input stream is already finished")
        self._size += len(delta.encode("utf-8", "surrogatepass"))
        if self._size > jsondata.MAX_BYTES:
            raise ToolctlError(f"streamed arguments too large (> {jsondata.MAX_BYTES} bytes)")
        await self._start()
        self._chunks.append(delta)
        await self._call.views.aphase("inputDelta", delta)
        await self._call.fire("onInputDelta", inputTextDelta=delta)

    async def afinish(self) -> RunResult:
        """Parse the whole text and run the call."""
        await self._start()
        self._done = True
        return await self._call.run("".join(self._chunks))

    def start(self) -> None:
        """Fire onInputStart now (otherwise the first delta does)."""
        run_sync(self._start())

    def feed(self, delta: str) -> None:
        """Sync :meth:`afeed`."""
        run_sync(self.afeed(delta))

    def finish(self) -> RunResult:
        """Sync :meth:`afinish`."""
        return run_sync(self.afinish())
