"""Asking the user through the MCP client: approval, resume data and a handler's own requests
(``ctx.ask``), progress.

Every question is a client request in ``ctx.ask``'s shape (:mod:`toolctl.runtime.clientask`):
the approval is an elicitation under key ``approval``, the resume form one under ``resume``.
They reach the client by one path per revision: :func:`ask_client` (2025-11-25
server-to-client requests) here, the input-required rounds in :mod:`toolctl.server.roundtrip`
(2026-07-28). Elicitation is used only when the client declared the capability and the
connection can carry server-to-client requests; otherwise the callbacks are ``None`` and the
runtime leaves the run awaiting approval (or suspended), which the result reports with its id.
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import TYPE_CHECKING, Any

import mcp_types as types

from toolctl.runtime import clientask

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable

    from mcp.server.context import ServerRequestContext

    from toolctl.runtime import ApprovalRequest
    from toolctl.spec import ToolSpec

log = logging.getLogger("toolctl.server")

_ELICIT = types.ClientCapabilities(elicitation=types.ElicitationCapability())
_PRIMITIVES = {"string", "number", "integer", "boolean"}
_PROPERTY_KEYS = {
    "type",
    "title",
    "description",
    "default",
    "enum",
    "enumNames",
    "oneOf",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "format",
    "items",
    "minItems",
    "maxItems",
    "anyOf",
}
_PREVIEW_LIMIT = 2000
LEVELS = ("debug", "info", "notice", "warning", "error", "critical", "alert", "emergency")


def can_elicit(ctx: ServerRequestContext[Any, Any]) -> bool:
    """True when this request may ask the user through ``elicitation/create``."""
    return ctx.session.can_send_request and client_elicits(ctx)


def client_elicits(ctx: ServerRequestContext[Any, Any]) -> bool:
    """True when the client declared the elicitation capability (at ``initialize``, or in the
    request's 2026-07-28 envelope)."""
    return ctx.session.check_client_capability(_ELICIT)


def preview(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=True, default=str)
    # ensure_ascii escapes control and bidi characters, so a prompt cannot be disguised.
    return text if len(text) <= _PREVIEW_LIMIT else text[:_PREVIEW_LIMIT] + "…"


def approval_question(name: str, shown: Any) -> str:
    """What the user is asked before tool ``name`` runs with input ``shown`` (an elicitation
    in 2025-11-25, an input-required round trip in 2026-07-28)."""
    return (
        f"Allow the tool {name!r} to run with this input?\n{preview(shown)}\n"
        "Accept to run it, decline to refuse."
    )


def resume_question(name: str, payload: Any) -> str:
    """What the user is asked when tool ``name`` suspended with ``payload``."""
    return f"The tool {name!r} needs more input to continue.\n{preview(payload)}"


APPROVAL_FORM: dict[str, Any] = {"type": "object", "properties": {}}


def approval_request(name: str, shown: Any, note: str | None = None) -> dict[str, Any]:
    """The approval question as a client request (``ctx.ask``'s shape, key ``approval``): a
    form with no fields, where accept runs the tool and decline declines it."""
    message = approval_question(name, shown)
    return clientask.elicitation(f"{note}\n{message}" if note else message, APPROVAL_FORM)


def resume_request(
    name: str, payload: Any, form: dict[str, Any], note: str | None = None
) -> dict[str, Any]:
    """The resume question as a client request (key ``resume``): the ``resumeSchema`` form."""
    message = resume_question(name, payload)
    return clientask.elicitation(f"{note}\n{message}" if note else message, form)


def answered(data: dict[str, Any] | None, key: str) -> dict[str, Any] | None:
    """The client's answer under ``key`` in resume data ``{ANSWERS_KEY: {...}}`` (None: none)."""
    answer = clientask.answers_in(data).get(key)
    return answer if isinstance(answer, dict) else None


def make_approver(
    ctx: ServerRequestContext[Any, Any], spec: ToolSpec
) -> Callable[[ApprovalRequest], Awaitable[bool | None]] | None:
    """An approver that asks the user (accept runs the tool, decline declines it)."""
    if not spec.require_approval or not can_elicit(ctx):
        return None

    async def approve(request: ApprovalRequest) -> bool | None:
        question = approval_request(request.title or request.tool, request.display_input)
        answer = answered(await ask_client(ctx, {"approval": question}, {}), "approval")
        action = answer.get("action") if answer else None
        log.info("approval for run %s: %s", request.run_id, action)
        if action == "accept":
            return True
        if action == "decline":
            return False
        return None  # dismissed or unanswered: leave the run awaiting approval

    return approve


def elicitation_schema(schema: Any) -> dict[str, Any] | None:
    """``schema`` as an elicitation form schema, or None when a form cannot express it.

    A form is a flat object of primitive fields (string, number, integer, boolean, enums and
    string-enum arrays); anything else (nesting, references) is left to ``toolctl resume``.
    """
    if not isinstance(schema, dict) or schema.get("type") != "object":
        return None
    props = schema.get("properties")
    if not isinstance(props, dict) or not props:
        return None
    out: dict[str, Any] = {}
    for key, prop in props.items():
        if not isinstance(prop, dict) or not _is_primitive(prop):
            return None
        out[key] = {k: v for k, v in prop.items() if k in _PROPERTY_KEYS}
    form: dict[str, Any] = {"type": "object", "properties": out}
    if isinstance(schema.get("required"), list):
        form["required"] = list(schema["required"])
    return form


def _is_primitive(prop: dict[str, Any]) -> bool:
    kind = prop.get("type")
    if kind in _PRIMITIVES:
        return True
    items = prop.get("items")
    return kind == "array" and isinstance(items, dict) and ("enum" in items or "anyOf" in items)


def make_on_suspend(
    ctx: ServerRequestContext[Any, Any], spec: ToolSpec
) -> Callable[[Any, Any], Awaitable[dict[str, Any] | None]] | None:
    """Ask the client at once when the handler suspends (2025-11-25 server-to-client requests):
    the requests of ``ctx.ask`` (elicitation, sampling, roots), or the resume data when a form
    can express ``resumeSchema``."""
    if not ctx.session.can_send_request:
        return None
    form = elicitation_schema(spec.resume_schema)

    async def on_suspend(payload: Any, resume_schema: Any) -> dict[str, Any] | None:
        asked = clientask.pending_requests(payload)
        if asked is not None:
            return await ask_client(ctx, *asked)
        if form is None or not client_elicits(ctx):
            return None
        question = resume_request(spec.title or spec.name, payload, form)
        answer = answered(await ask_client(ctx, {"resume": question}, {}), "resume")
        if answer and answer.get("action") == "accept" and isinstance(answer.get("content"), dict):
            return dict(answer["content"])
        return None  # declined or dismissed: the run stays suspended

    return on_suspend


_REQUESTS: dict[str, tuple[Any, Any]] = {
    "elicitation/create": (types.ElicitRequest, types.ElicitResult),
    "sampling/createMessage": (types.CreateMessageRequest, types.CreateMessageResult),
    "roots/list": (types.ListRootsRequest, types.ListRootsResult),
}


async def ask_client(
    ctx: ServerRequestContext[Any, Any], requests: dict[str, Any], answered: dict[str, Any]
) -> dict[str, Any] | None:
    """Send each of a handler's requests to the client (server-to-client requests, related to
    the call): the resume data with every answer, or None when one could not be asked (logged;
    the run stays suspended)."""
    from mcp.shared.message import ServerMessageMetadata

    answers = dict(answered)
    related = ServerMessageMetadata(related_request_id=ctx.request_id)
    for key, request in requests.items():
        kinds = _REQUESTS.get(request.get("method"))
        if kinds is None:
            return None
        try:
            typed = kinds[0].model_validate(request)
            result = await ctx.session.send_request(typed, kinds[1], metadata=related)
        except Exception as exc:  # the client failed, refused or went away
            log.warning("could not ask the client %s (%s: %s)", key, type(exc).__name__, exc)
            return None
        answers[key] = result.model_dump(by_alias=True, exclude_none=True, mode="json")
    return {clientask.ANSWERS_KEY: answers}


def missing_capability(
    ctx: ServerRequestContext[Any, Any], requests: dict[str, Any]
) -> dict[str, Any] | None:
    """The client capabilities a handler's requests need that the client did not declare."""
    needed: dict[str, Any] = {}
    for request in requests.values():
        method = request.get("method") if isinstance(request, dict) else None
        name = clientask.CAPABILITIES.get(str(method), "roots")
        caps = types.ClientCapabilities.model_validate({name: {}})
        if not ctx.session.check_client_capability(caps):
            needed[name] = {}
    return needed or None


def declared_capabilities(ctx: ServerRequestContext[Any, Any]) -> dict[str, Any]:
    """The client capabilities the caller declared (at ``initialize``, or in the request's
    2026-07-28 envelope), as JSON: what the handler sees as ``ctx.client_capabilities``."""
    caps = ctx.session.client_capabilities
    if caps is None:
        return {}
    dumped: dict[str, Any] = caps.model_dump(by_alias=True, exclude_none=True, mode="json")
    return dumped


class Relay:
    """Turns the runtime's synchronous callbacks (from any thread) into ordered notifications
    for the request: ``notifications/progress`` when the client asked for progress, and log
    lines (``notifications/message``) at or above ``log_level``."""

    def __init__(self, ctx: ServerRequestContext[Any, Any], log_level: str | None = None) -> None:
        self._ctx = ctx
        self._loop = asyncio.get_running_loop()
        self._queue: asyncio.Queue[tuple[Any, ...] | None] = asyncio.Queue()
        self._min_log = LEVELS.index(log_level) if log_level in LEVELS else None

    @staticmethod
    def wanted(ctx: ServerRequestContext[Any, Any]) -> bool:
        """True when the request carries a progress token."""
        return ctx.meta is not None and ctx.meta.get("progress_token") is not None

    def report(self, progress: float, total: float | None, message: str | None) -> None:
        """The runtime's ``on_progress``: safe to call from a worker thread."""
        self._loop.call_soon_threadsafe(
            self._queue.put_nowait, ("progress", progress, total, message)
        )

    def log(self, level: str, data: Any, logger: str | None) -> None:
        """Queue a log line (dropped below the client's level): safe from any thread."""
        if self._min_log is None or LEVELS.index(level) < self._min_log:
            return
        self._loop.call_soon_threadsafe(self._queue.put_nowait, ("log", level, data, logger))

    def close(self) -> None:
        """Stop the relay after the notifications queued so far."""
        self._loop.call_soon_threadsafe(self._queue.put_nowait, None)

    async def run(self) -> None:
        """Send queued notifications until :meth:`close`."""
        session = self._ctx.session
        while (item := await self._queue.get()) is not None:
            try:
                if item[0] == "progress":
                    await session.report_progress(*item[1:])
                else:
                    # Sent as a plain notification on the request's stream: the level was
                    # already checked against the client's choice (see ClientLog.threshold).
                    level, data, logger = item[1:]
                    note = types.LoggingMessageNotification(
                        params=types.LoggingMessageNotificationParams(
                            level=level, data=data, logger=logger
                        )
                    )
                    await session.send_notification(note, related_request_id=self._ctx.request_id)
            except Exception:  # a closed channel must not fail the call
                log.debug("notification not delivered", exc_info=True)
