"""The options of one call: :class:`CallOptions`, and the keyword form that builds it.

``registry.call(name, input, CallOptions(approve=True))`` and
``registry.call(name, input, approve=True)`` are the same call: the keywords (typed by
:class:`CallKeywords`) are a convenience that builds the options object.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeAlias, TypedDict

if TYPE_CHECKING:
    from toolctl.principal import Principal
    from toolctl.runtime.history.records import RunStore
    from toolctl.runtime.result import ApprovalRequest

# ``bool | None``: True approves, False declines, None leaves the run awaiting approval.
Approver = Callable[["ApprovalRequest"], "Awaitable[bool | None] | bool | None"]
# ``(payload, resume_schema)`` -> resume data to continue at once, or None to stay suspended.
OnSuspend = Callable[[Any, Any], "Awaitable[Any] | Any"]
# ``(progress, total, message)``.
Progress = Callable[[float, "float | None", "str | None"], None]
# Where a call records its run: None the registry's history, False off, a path, or a store.
StoreChoice: TypeAlias = "RunStore | str | Path | bool | None"


@dataclass(slots=True)
class CallOptions:
    """How to run one call (every field optional). The runtime never modifies it, so one
    object may serve many calls (not frozen: that would cost a microsecond on every call).

    * ``context``: the request context (a dict or a JSON string), checked against
      ``requestContextSchema``.
    * ``approve`` / ``decline``: decide a ``requireApproval`` tool up front (``decline`` may be
      the reason, a string, shown to the model).
    * ``timeout``: seconds before the run ends ``timed_out`` (default: the tool's).
    * ``background``: hand the run to a detached worker and return ``running`` at once.
    * ``store``: the run history: None (default) the registry's, False off (pending runs are kept
      in this process), a path, or a store object.
    * ``approver``: asked when approval is required and not decided up front
      (``async (ApprovalRequest) -> bool | None``).
    * ``on_suspend``: asked when the handler suspends (``async (payload, resume_schema) ->
      data | None``: data resumes the run at once).
    * ``on_progress``: ``(progress, total, message) -> None``, the handler's progress reports.
    * ``run_id``: the id to give the run (default: a new time-ordered id).
    * ``origin``: the front end starting the run, recorded with it (``"api"`` by default; the
      CLI, ``toolctl test`` and the MCP server say ``"cli"``, ``"test"``, ``"mcp"``: see
      :class:`toolctl.runtime.history.records.Origin`). The MCP server acts on its own runs only.
    * ``principal``: the verified caller (:class:`toolctl.principal.Principal`), None for the
      local operator (the CLI and the Python API act on every run).
    * ``client_capabilities``: what the calling MCP client declared it can answer (its
      ``ClientCapabilities`` as JSON), which the handler reads as ``ctx.client_capabilities``
      and ``ctx.can_ask(method)``; None when unknown (the CLI and the API answer every
      request themselves).
    * ``rate_charged``: the call was already charged to its rate limit (``limits:``) by the
      front end (the HTTP server does it before the MCP session, to answer 429): the pipeline
      does not charge it again.
    """

    context: Any = None  # arbitrary JSON (or its text)
    approve: bool | None = None
    decline: bool | str | None = None
    timeout: float | None = None
    background: bool = False
    store: StoreChoice = None
    approver: Approver | None = None
    on_suspend: OnSuspend | None = None
    on_progress: Progress | None = None
    run_id: str | None = None
    origin: str | None = "api"  # the front end starting the run (records.Origin); see there
    principal: Principal | None = None
    client_capabilities: dict[str, Any] | None = None
    rate_charged: bool = False


class ContinueKeywords(TypedDict, total=False):
    """The options that apply when a pending run continues (``approve``, ``resume``)."""

    store: StoreChoice
    approver: Approver | None
    on_suspend: OnSuspend | None
    on_progress: Progress | None
    client_capabilities: dict[str, Any] | None


class CallKeywords(TypedDict, total=False):
    """The keyword form of :class:`CallOptions` (``registry.call(name, input, approve=True)``)."""

    context: Any
    approve: bool | None
    decline: bool | str | None
    timeout: float | None
    background: bool
    store: StoreChoice
    approver: Approver | None
    on_suspend: OnSuspend | None
    on_progress: Progress | None
    run_id: str | None
    origin: str | None
    principal: Principal | None
    client_capabilities: dict[str, Any] | None
    rate_charged: bool


_DEFAULT = CallOptions()


def build(options: CallOptions | None, keywords: Mapping[str, Any]) -> CallOptions:
    """``options`` with the keyword form applied on top (either may be empty)."""
    if not keywords:
        return options if options is not None else _DEFAULT
    if options is None:
        return CallOptions(**keywords)
    return dataclasses.replace(options, **keywords)
