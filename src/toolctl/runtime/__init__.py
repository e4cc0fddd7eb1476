"""The runtime: one call pipeline for the CLI, the Python API, ``toolctl test`` and MCP.

Public names (imported lazily, so ``import toolctl.runtime`` stays cheap)::

    from toolctl.runtime import RunResult, RunStatus, ToolContext, ToolErrorInfo, CallOptions
    from toolctl.runtime import call, acall, resume, approve, decline, wait, get_run, InputStream

See :class:`~toolctl.runtime.options.CallOptions` for the call options and
``docs/architecture.md`` for the contract.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from toolctl.runtime.api import (
        aapprove,
        acall,
        approve,
        aresume,
        call,
        decline,
        get_run,
        resume,
        wait,
    )
    from toolctl.runtime.context import AbortSignal, ToolAborted, ToolContext
    from toolctl.runtime.errors import RunNotFoundError, RunStateError, StateError
    from toolctl.runtime.memstore import MemoryStore
    from toolctl.runtime.options import CallOptions
    from toolctl.runtime.records import RunRecord
    from toolctl.runtime.resources import Runtime
    from toolctl.runtime.result import (
        ApprovalInfo,
        ApprovalRequest,
        ErrorCode,
        RunResult,
        RunStatus,
        ToolErrorInfo,
    )
    from toolctl.runtime.state import RunCancelled
    from toolctl.runtime.store import SqliteStore, open_store
    from toolctl.runtime.streaming import InputStream

_LAZY = {
    "RunResult": "result",
    "RunStatus": "result",
    "ToolErrorInfo": "result",
    "ApprovalRequest": "result",
    "ApprovalInfo": "result",
    "ErrorCode": "result",
    "ToolContext": "context",
    "AbortSignal": "context",
    "ToolAborted": "context",
    "RunCancelled": "state",
    "CallOptions": "options",
    "InputStream": "streaming",
    "StateError": "errors",
    "RunNotFoundError": "errors",
    "RunStateError": "errors",
    "SqliteStore": "store",
    "MemoryStore": "memstore",
    "Runtime": "resources",
    "RunRecord": "records",
    "open_store": "store",
    "call": "api",
    "acall": "api",
    "resume": "api",
    "aresume": "api",
    "approve": "api",
    "aapprove": "api",
    "decline": "api",
    "get_run": "api",
    "wait": "api",
}

__all__ = [
    "AbortSignal",
    "ApprovalInfo",
    "ApprovalRequest",
    "CallOptions",
    "ErrorCode",
    "InputStream",
    "MemoryStore",
    "RunCancelled",
    "RunNotFoundError",
    "RunRecord",
    "RunResult",
    "RunStateError",
    "RunStatus",
    "Runtime",
    "SqliteStore",
    "StateError",
    "ToolAborted",
    "ToolContext",
    "ToolErrorInfo",
    "aapprove",
    "acall",
    "approve",
    "aresume",
    "call",
    "decline",
    "get_run",
    "open_store",
    "resume",
    "wait",
]


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'toolctl.runtime' has no attribute {name!r}")
    return getattr(importlib.import_module(f"toolctl.runtime.{module}"), name)
