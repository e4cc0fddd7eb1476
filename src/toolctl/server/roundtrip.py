"""Approval and suspend/resume as 2026-07-28 multi-round-trip requests.

A run that needs the user (awaiting approval, or suspended with a ``resumeSchema`` a form can
express) is kept in the run store, and the ``tools/call`` answers with an
``InputRequiredResult``: an elicitation form under ``inputRequests`` and ``requestState`` naming
the run. The client retries the same ``tools/call`` with its answer under ``inputResponses`` and
the state echoed; the server continues the run from the store through the runtime's own
approve / decline / resume, so any replica sharing the store can take the follow-up.

What holds across the round trip:

* ``requestState`` is sealed by the SDK's ``RequestStateBoundary`` (AES-GCM, bound to the tool
  name and a digest of the arguments, with an expiry): a forged or edited state, or a follow-up
  with other arguments or another tool, is refused before any handler runs.
* the runtime binds the pending run to the tool digest, its input and its request context
  (the stored ones are used, never the follow-up's); the server refuses a follow-up when the
  tool's definition changed since the run was requested.
* the run belongs to the principal whose token started it (with OAuth): a follow-up from
  another principal, even with a valid state, is refused as an invalid state
  (server/visibility.py), so a leaked ``requestState`` answers nothing.
"""

from __future__ import annotations

import base64
import json
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anyio
import mcp_types as types
from mcp.shared.exceptions import MCPError

from toolctl.keyfile import ensure_key_file
from toolctl.runtime import clientask
from toolctl.runtime.errors import StateError, key_file_errors
from toolctl.server.identity import caller
from toolctl.server.interaction import (
    approval_request,
    declared_capabilities,
    elicitation_schema,
    resume_request,
)
from toolctl.server.results import RUN_META_KEY, call_result, error_result, shown_payload
from toolctl.server.security import ServeUsageError
from toolctl.server.visibility import visible_over_mcp

if TYPE_CHECKING:
    from mcp.server.context import ServerRequestContext

    from toolctl.registry import Registry
    from toolctl.runtime import RunResult
    from toolctl.runtime.history.records import RunRecord, RunStore
    from toolctl.spec import ToolSpec

log = logging.getLogger("toolctl.server")
KEY_ENV = "TOOLCTL_REQUEST_STATE_KEY"
KEY_FILE = "request-state.key"
STATE_TTL = 24 * 3600.0  # a pending run may wait for its user this long per round


def questions(
    result: RunResult, spec: ToolSpec, *, note: str | None = None
) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """Every question a paused run asks its client, as client requests in ``ctx.ask``'s shape,
    and the answers already given: the handler's own requests (``ctx.ask``), the approval
    (key ``approval``) or the resume form (key ``resume``); None when nothing a client can
    answer is pending (a form cannot express the ``resumeSchema``, or the run is not paused).
    ``note``: why the question is asked again (the previous answer was refused)."""
    status = result.status.value
    name = spec.title or spec.name
    if status == "awaiting_approval":
        shown = result.transcript.get("approval", result.transcript.get("input"))
        return {"approval": approval_request(name, shown, note)}, {}
    if status != "suspended":
        return None
    asked = clientask.pending_requests(result.suspend_payload)
    if asked is not None:  # the handler asks the client itself (ctx.ask / elicit / sample ...)
        return asked
    form = elicitation_schema(spec.resume_schema)
    if form is None:
        return None
    return {"resume": resume_request(name, shown_payload(result), form, note)}, {}


def input_required(
    result: RunResult, spec: ToolSpec, *, note: str | None = None
) -> dict[str, Any] | None:
    """The ``InputRequiredResult`` that asks the client what the paused run needs (see
    :func:`questions`), or None when a client cannot answer it (the result then says how to
    continue with ``toolctl``). Its ``requestState`` names the run and the answers so far."""
    asked = questions(result, spec, note=note)
    if asked is None:
        return None
    requests, answered = asked
    state = {"run": result.run_id, "answered": answered}
    return {
        "resultType": "input_required",
        "inputRequests": requests,
        "requestState": json.dumps(state),
    }


async def follow_up(
    ctx: ServerRequestContext[Any, Any],
    registry: Registry,
    spec: ToolSpec,
    params: types.CallToolRequestParams,
) -> RunResult | dict[str, Any]:
    """Continue the run a verified ``requestState`` names with the client's answer: its new
    result, or an ``isError`` result when it cannot continue."""
    from toolctl.errors import ToolctlError
    from toolctl.runtime.api import resolve_store
    from toolctl.runtime.errors import DatabaseUnavailableError

    run_id = _state(params.request_state)
    store = resolve_store(registry)
    try:
        record = await anyio.to_thread.run_sync(store.get, run_id)
    except DatabaseUnavailableError as exc:
        log.error("cannot continue run %s: %s", run_id, exc)
        return _unavailable(run_id)
    except ToolctlError:
        return error_result(f"Run {run_id} no longer exists; call the tool again.")
    if record.tool != spec.name or not visible_over_mcp(record, caller(ctx)):
        raise MCPError(code=types.INVALID_PARAMS, message="Invalid or expired requestState")
    if record.tool_digest != spec.digest:
        return error_result(
            f"The tool {spec.name} changed since run {run_id} was requested, so the answer was "
            f"not applied. Call the tool again (toolctl decline {run_id} ends the old run).",
            {RUN_META_KEY: {"id": run_id, "status": record.status}},
        )
    state = json.loads(params.request_state or "{}")
    answered = state.get("answered") if isinstance(state.get("answered"), dict) else {}
    responses = {k: _plain(v) for k, v in (params.input_responses or {}).items()}
    try:
        return await answer(
            registry, spec, record, {**answered, **responses}, declared_capabilities(ctx)
        )
    except DatabaseUnavailableError as exc:
        # Every claim is a compare-and-set: one that failed left the run pending as it was.
        log.error("cannot continue run %s: %s", run_id, exc)
        return _unavailable(run_id)


async def answer(
    registry: Registry,
    spec: ToolSpec,
    record: RunRecord,
    answers: dict[str, Any],
    capabilities: dict[str, Any] | None = None,
) -> RunResult | dict[str, Any]:
    """Apply the client's ``answers`` (plain JSON, by request key) to the paused run
    ``record``: the one path for every kind of question (:func:`questions`), from a 2026-07-28
    follow-up and from ``tasks/update``. Its result, or a final result (a dict)."""
    run_id = record.run_id
    if record.status == "awaiting_approval":
        return await continue_run(
            registry, spec, run_id, "approval", answers.get("approval"), capabilities
        )
    if clientask.pending_requests(record.suspend) is not None:
        data = {clientask.ANSWERS_KEY: answers}
        return await resume_input(registry, run_id, data, capabilities)
    return await continue_run(registry, spec, run_id, "resume", answers.get("resume"), capabilities)


def _unavailable(run_id: str) -> dict[str, Any]:
    return error_result(
        f"Run {run_id} could not be continued: the run-history database is unavailable "
        "(restarting or unreachable). The run is still waiting; send the same answer again "
        "in a moment.",
        {RUN_META_KEY: {"id": run_id}},
    )


async def continue_run(
    registry: Registry,
    spec: ToolSpec,
    run_id: str,
    ask: str,
    answer: Any,
    capabilities: dict[str, Any] | None = None,
) -> RunResult | dict[str, Any]:
    """Apply the user's ``answer`` (an elicitation result as JSON) to the paused run
    ``run_id``: approve, decline or resume it through the runtime. Its result, or a final
    result (a dict).

    Only an accepted answer continues the run. ``decline`` of an approval declines the run;
    any other ``decline`` or ``cancel`` (or no answer) ends the round trip with an ``isError``
    result naming the run, which stays pending, as a 2025-11-25 elicitation does: asking the
    same question again would loop until the client gives up. Resume data the
    ``resumeSchema`` refuses asks again, saying what was wrong.
    """
    from toolctl.runtime.api import aapprove, aresume, decline, get_run
    from toolctl.runtime.errors import RunStateError

    answer = _plain(answer)
    action = answer.get("action") if isinstance(answer, dict) else None
    try:
        if ask == "approval" and action == "accept":
            return await aapprove(
                registry, run_id, by="mcp-client", client_capabilities=capabilities
            )
        if ask == "approval" and action == "decline":
            return await anyio.to_thread.run_sync(decline, registry, run_id, "declined by the user")
        content = answer.get("content") if isinstance(answer, dict) else None
        if ask == "resume" and action == "accept":
            data = dict(content) if isinstance(content, dict) else {}
            result = await aresume(registry, run_id, data, client_capabilities=capabilities)
            if result.error is None or result.error.code != "invalid_resume":
                return result
            pending = await anyio.to_thread.run_sync(get_run, registry, run_id)
            again = input_required(pending, spec, note=result.error.text())
            return again if again is not None else call_result(result, spec)
    except RunStateError as exc:
        return error_result(f"Run {run_id} cannot continue: {exc.message}")
    # Dismissed (or no answer): the run stays pending and the result says so.
    return call_result(await anyio.to_thread.run_sync(get_run, registry, run_id), spec)


async def resume_input(
    registry: Registry,
    run_id: str,
    data: dict[str, Any],
    capabilities: dict[str, Any] | None = None,
) -> RunResult | dict[str, Any]:
    """Resume ``run_id`` with the answers to its handler's requests (``data``): its result, or
    an ``isError`` result when it cannot continue. ``capabilities``: what the answering client
    declared (the handler asks it only what it can answer); None in a background worker."""
    from toolctl.runtime.api import aresume
    from toolctl.runtime.errors import RunStateError

    try:
        return await aresume(registry, run_id, data, client_capabilities=capabilities)
    except RunStateError as exc:
        return error_result(f"Run {run_id} cannot continue: {exc.message}")


async def answer_at_once(
    registry: Registry,
    result: RunResult,
    responses: dict[str, Any],
    capabilities: dict[str, Any] | None = None,
) -> RunResult:
    """A run that just suspended asking the client, resumed at once with the ``responses``
    the call already carried (those its requests name); else ``result`` unchanged."""
    from toolctl.runtime.api import aresume

    asked = clientask.pending_requests(result.suspend_payload)
    if asked is None:
        return result
    answers = {k: _plain(v) for k, v in responses.items() if k in asked[0]}
    if not answers:
        return result
    data = {clientask.ANSWERS_KEY: answers}
    return await aresume(registry, result.run_id, data, client_capabilities=capabilities)


def _plain(answer: Any) -> Any:
    # The SDK parses known result shapes into models: the handler gets plain JSON.
    dump = getattr(answer, "model_dump", None)
    return dump(by_alias=True, exclude_none=True, mode="json") if callable(dump) else answer


def state_run_id(text: str) -> str:
    """The run a (verified) ``requestState`` names."""
    return _state(text)


def _state(text: str | None) -> str:
    try:
        state = json.loads(text or "")
        return str(state["run"])
    except (ValueError, KeyError, TypeError):
        raise MCPError(
            code=types.INVALID_PARAMS, message="Invalid or expired requestState"
        ) from None


def state_keys(registry: Registry) -> list[bytes]:
    """The keys sealing ``requestState``: ``$TOOLCTL_REQUEST_STATE_KEY`` (base64, comma-separated
    for rotation: the first seals), else a key kept next to the run history (0600; created on
    first use), which every replica sharing that history shares."""
    env = os.environ.get(KEY_ENV, "").strip()
    if env:
        try:
            keys = [base64.b64decode(k, validate=True) for k in env.split(",") if k.strip()]
        except ValueError:
            keys = []
        if not keys or any(len(k) < 32 for k in keys):
            raise ServeUsageError(
                f"{KEY_ENV} must be base64 keys of at least 32 bytes, comma-separated",
                hint="make one with: openssl rand -base64 32",
            )
        return keys
    store = _history(registry)
    path = None if store is None else store.path
    if store is not None and store.capabilities.shared:
        # A PostgreSQL history shares its binding secret through the database: every replica
        # derives the same sealing key from it (a separate key, not the binding key itself).
        import hashlib
        import hmac

        secret = store.binding_key()
        return [hmac.new(secret, b"toolctl requestState", hashlib.sha256).digest()]
    if path is None:  # no file to share it through: this process alone continues its runs
        if store is not None and store.capabilities.history:  # a history of its own
            log.warning(
                "requestState is sealed with a key of this process; set %s on every replica "
                "so any of them can take an approval or resume follow-up",
                KEY_ENV,
            )
        return [os.urandom(32)]
    folder = Path(path).parent
    folder.mkdir(parents=True, exist_ok=True)
    with key_file_errors():
        key = ensure_key_file(folder / KEY_FILE, os.urandom(32), "the requestState key")
    if len(key) != 32:
        raise StateError(
            f"the requestState key {folder / KEY_FILE} does not hold a 32-byte key",
            hint=f"delete {folder / KEY_FILE} to make a new one",
        )
    return [key]


def _history(registry: Registry) -> RunStore | None:
    from toolctl.runtime.api import resolve_store

    try:
        return resolve_store(registry)
    except Exception:  # no usable history: calls report that themselves
        return None
