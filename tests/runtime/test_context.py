"""The handler context: abort signal, observe (spans, logs) and suspend."""

from __future__ import annotations

import contextlib
import sys
import threading
import types
from collections.abc import Iterator
from typing import Any

import pytest

from toolctl.runtime import AbortSignal, ToolAborted, ToolContext
from toolctl.runtime.context import SuspendRequested


def test_abort_signal_wakes_waiters() -> None:
    signal = AbortSignal()
    assert not signal.aborted and not signal.wait(0.01)
    threading.Timer(0.05, signal.abort, args=("timeout",)).start()
    assert signal.wait(5)
    assert signal.aborted and signal.reason == "timeout"
    with pytest.raises(ToolAborted, match="timeout"):
        signal.raise_if_aborted()
    signal.abort("cancelled")
    assert signal.reason == "timeout"  # the first reason stands


def test_suspend_is_not_swallowed_by_except_exception() -> None:
    ctx = ToolContext(run_id="r", tool_name="t")

    def handler() -> None:
        try:
            ctx.suspend({"q": 1})
        except Exception:  # what careless handler code does
            pytest.fail("suspend was caught")

    with pytest.raises(SuspendRequested) as info:
        handler()
    assert info.value.payload == {"q": 1} and not ctx.resumed


def test_span_is_a_no_op_without_opentelemetry() -> None:
    with ToolContext(run_id="r", tool_name="t").observe.span("x") as span:
        assert span is None


def test_span_uses_a_configured_tracer(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[tuple[str, dict[str, Any]]] = []

    class Tracer:
        @contextlib.contextmanager
        def start_as_current_span(
            self, name: str, attributes: dict[str, Any], **options: Any
        ) -> Iterator[str]:
            opened.append((name, attributes))
            yield "span"

    class Provider:  # a configured SDK provider (not the default proxy)
        pass

    fake = types.ModuleType("opentelemetry.trace")
    fake.get_tracer_provider = Provider  # type: ignore[attr-defined]
    fake.get_tracer = lambda name: Tracer()  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "opentelemetry.trace", fake)
    with ToolContext(run_id="r1", tool_name="t").observe.span("fetch", city="Paris") as span:
        assert span._span == "span"  # the handler's view of it scrubs what it writes
    assert opened == [("fetch", {"toolctl.tool": "t", "toolctl.run_id": "r1", "city": "Paris"})]
