"""A fake ``ToolContext``: just enough for the example handlers, and observable by tests."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, NoReturn


class Suspended(Exception):
    """Raised by :meth:`FakeContext.suspend`, like the runtime's suspension signal."""

    def __init__(self, payload: Mapping[str, Any]) -> None:
        super().__init__("suspended")
        self.payload = dict(payload)


class Aborted(Exception):
    """Raised by :meth:`FakeAbort.raise_if_aborted` once the run is aborted."""


@dataclass
class FakeAbort:
    """The abort signal: ``aborted`` flips when the test says so."""

    aborted: bool = False

    def raise_if_aborted(self) -> None:
        if self.aborted:
            raise Aborted


@dataclass
class FakeObserve:
    """Records spans opened and records logged."""

    spans: list[str] = field(default_factory=list)
    logs: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @contextmanager
    def span(self, name: str, **attributes: Any) -> Iterator[None]:
        self.spans.append(name)
        yield None

    def log(self, msg: str, /, **fields: Any) -> None:
        self.logs.append((msg, fields))


@dataclass
class FakeContext:
    """Just enough of ``ToolContext`` for the example handlers."""

    request_context: dict[str, Any] | None = None
    resume_data: dict[str, Any] | None = None
    abort: FakeAbort = field(default_factory=FakeAbort)
    observe: FakeObserve = field(default_factory=FakeObserve)
    abort_after: int | None = None
    progress_calls: list[tuple[float, float | None, str | None]] = field(default_factory=list)

    def suspend(self, payload: Mapping[str, Any]) -> NoReturn:
        raise Suspended(payload)

    def progress(
        self, value: float, total: float | None = None, message: str | None = None
    ) -> None:
        self.progress_calls.append((value, total, message))
        if self.abort_after is not None and len(self.progress_calls) >= self.abort_after:
            self.abort.aborted = True
