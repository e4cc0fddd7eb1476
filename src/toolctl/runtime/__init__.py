"""The runtime: one call pipeline for the CLI, the Python API, ``toolctl test`` and MCP.

Public names (imported lazily, so ``import toolctl.runtime`` stays cheap)::

    from toolctl.runtime import RunResult, RunStatus, ToolContext, ToolErrorInfo, CallOptions
    from toolctl.runtime import call, acall, resume, approve, decline, wait, get_run, InputStream

See :class:`~toolctl.runtime.options.CallOptions` for the call options and
``docs/architecture.md`` for the contract.

The modules here are the API and what every sub-package shares (``api``, ``pending``,
``streaming``, ``options``, ``result``, ``errors``, ``context``, ``clientask``, ``source``,
``resources``, ``jsondata``, ``redact``, ``exctext``, ``memo``); the rest is grouped by
concern: ``pipeline/`` (one run of one tool), ``execution/`` (running a handler: in process,
isolated, in a background worker) and ``history/`` (rows, stores, the ledger). The background
worker is a front end, :mod:`toolctl.worker`.
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
    from toolctl.runtime.history.memory import MemoryStore
    from toolctl.runtime.history.records import RunRecord
    from toolctl.runtime.history.sqlite import SqliteStore, open_store
    from toolctl.runtime.options import CallOptions
    from toolctl.runtime.pipeline.state import RunCancelled
    from toolctl.runtime.resources import Runtime
    from toolctl.runtime.result import (
        ApprovalInfo,
        ApprovalRequest,
        ErrorCode,
        RunResult,
        RunStatus,
        ToolErrorInfo,
    )
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
    "RunCancelled": "pipeline.state",
    "CallOptions": "options",
    "InputStream": "streaming",
    "StateError": "errors",
    "RunNotFoundError": "errors",
    "RunStateError": "errors",
    "SqliteStore": "history.sqlite",
    "MemoryStore": "history.memory",
    "Runtime": "resources",
    "RunRecord": "history.records",
    "open_store": "history.sqlite",
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
