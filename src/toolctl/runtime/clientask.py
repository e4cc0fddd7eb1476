"""Handlers that ask the client: elicitation (form and URL), sampling, roots.

One meaning on every front end. ``ctx.ask({key: request, ...})`` returns the answers to every
request, suspending the run until all are answered: the run is stored ``suspended`` with the
payload ``{"dev.toolctl/inputRequests": {key: request}, "dev.toolctl/answered": {...}}`` and
continues when resumed with ``{"dev.toolctl/answers": {key: answer}}``. The handler runs again
from the start with the answers gathered so far, so asking in several rounds (``ask`` after
``ask``) works; each round asks only what is still unanswered.

A request is MCP's shape (``{"method": "elicitation/create" | "sampling/createMessage" |
"roots/list", "params": {...}}``), and an answer is the client's result for it
(``{"action": "accept", "content": {...}}`` for an elicitation). ``toolctl serve`` turns the
requests into an ``InputRequiredResult`` (2026-07-28) or server-to-client requests (2025-11-25);
any other caller answers with ``registry.resume(run_id, {"dev.toolctl/answers": {...}})``.

A tool may also declare requests (``inputRequests`` in its YAML) that are asked the same way
*before* its handler runs, and so before a background run is queued: the run suspends with
those requests (the payload marked ``dev.toolctl/beforeRun``), and once they are answered the
handler starts (a background run in its worker) with the answers as its ``resume_data``, so
``ctx.ask`` of the same keys returns them at once (``ctx.answers`` holds them too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

REQUESTS_KEY = "dev.toolctl/inputRequests"
ANSWERED_KEY = "dev.toolctl/answered"
ANSWERS_KEY = "dev.toolctl/answers"
# the form schemas of the answers already given ({key: requestedSchema}): the secret fields of
# an earlier round's answer stay known in every later round, whichever process resumes it
ANSWERED_SCHEMAS_KEY = "dev.toolctl/answeredSchemas"
# marks the suspend payload of a tool's declared ``inputRequests``, asked before its handler runs
BEFORE_RUN_KEY = "dev.toolctl/beforeRun"
METHODS = ("elicitation/create", "sampling/createMessage", "roots/list")
# The client capability each request needs (MCP ClientCapabilities keys).
CAPABILITIES = {
    "elicitation/create": "elicitation",
    "sampling/createMessage": "sampling",
    "roots/list": "roots",
}


def can_answer(capabilities: dict[str, Any] | None, method: str) -> bool:
    """True when a caller with ``capabilities`` (an MCP client's ``ClientCapabilities``, None
    when the caller does not say) can answer a ``method`` request."""
    needed = CAPABILITIES.get(method)
    if needed is None:
        return False
    return capabilities is None or isinstance(capabilities.get(needed), dict)


def answers_in(resume_data: Any) -> dict[str, Any]:
    """The answers a resumed run was given (empty when none)."""
    if isinstance(resume_data, dict) and isinstance(resume_data.get(ANSWERS_KEY), dict):
        return dict(resume_data[ANSWERS_KEY])
    return {}


def pending_requests(payload: Any) -> tuple[dict[str, Any], dict[str, Any]] | None:
    """``(requests, answered)`` of a suspend payload that asks the client, else None."""
    if not isinstance(payload, dict) or not isinstance(payload.get(REQUESTS_KEY), dict):
        return None
    answered = payload.get(ANSWERED_KEY)
    return dict(payload[REQUESTS_KEY]), dict(answered) if isinstance(answered, dict) else {}


def check_requests(requests: Any) -> dict[str, dict[str, Any]]:
    """``requests`` checked: a non-empty mapping of keys to MCP requests this API knows."""
    if not isinstance(requests, dict) or not requests:
        raise ValueError("ctx.ask needs a non-empty mapping of keys to requests")
    for key, request in requests.items():
        method = request.get("method") if isinstance(request, dict) else None
        if not isinstance(key, str) or method not in METHODS:
            raise ValueError(f"ctx.ask: request {key!r} must be one of {', '.join(METHODS)}")
    return requests


def elicitation(message: str, schema: dict[str, Any]) -> dict[str, Any]:
    """A form elicitation request (a flat object schema of primitive fields)."""
    params = {"mode": "form", "message": message, "requestedSchema": schema}
    return {"method": "elicitation/create", "params": params}


def url_elicitation(message: str, url: str, elicitation_id: str) -> dict[str, Any]:
    """A URL-mode elicitation request (the user completes it out of band, at ``url``)."""
    params = {"mode": "url", "message": message, "url": url, "elicitationId": elicitation_id}
    return {"method": "elicitation/create", "params": params}


def sampling(messages: list[dict[str, Any]], max_tokens: int, **params: Any) -> dict[str, Any]:
    """A sampling request (``messages`` in MCP's shape; ``systemPrompt`` etc. in ``params``)."""
    return {
        "method": "sampling/createMessage",
        "params": {"messages": messages, "maxTokens": max_tokens, **params},
    }


def roots() -> dict[str, Any]:
    """A request for the client's roots."""
    return {"method": "roots/list", "params": {}}


def form_schema(request: Any) -> dict[str, Any] | None:
    """The ``requestedSchema`` of a form elicitation request, else None."""
    if not isinstance(request, dict) or request.get("method") != "elicitation/create":
        return None
    params = request.get("params")
    schema = params.get("requestedSchema") if isinstance(params, dict) else None
    return schema if isinstance(schema, dict) else None


def answer_schemas(payload: Any) -> dict[str, dict[str, Any]]:
    """``{key: schema of the answer}`` for the form elicitations a suspend payload asks and
    has had answered: the schema an answer (``{"action": ..., "content": {...}}``) has, its
    ``content`` shaped by the form's ``requestedSchema`` (whose ``writeOnly``/``x-sensitive``
    fields, and fields with secret-like names, are the answer's secrets)."""
    pending = pending_requests(payload)
    if pending is None:
        return {}
    requests, _ = pending
    forms = {key: form_schema(request) for key, request in requests.items()}
    earlier = payload.get(ANSWERED_SCHEMAS_KEY)
    if isinstance(earlier, dict):
        forms.update({k: v for k, v in earlier.items() if isinstance(v, dict) and k not in forms})
    return {
        key: {"type": "object", "properties": {"content": schema}}
        for key, schema in forms.items()
        if schema is not None
    }


def suspend_payload(
    missing: dict[str, Any], answered: dict[str, Any], seen: dict[str, Any]
) -> dict[str, Any]:
    """What ``ctx.ask`` suspends with: the requests still ``missing``, the answers given so
    far, and the form schemas of those answers (from the requests ``seen`` in this run)."""
    payload: dict[str, Any] = {REQUESTS_KEY: missing, ANSWERED_KEY: answered}
    schemas = {k: form_schema(seen.get(k)) for k in answered}
    kept = {k: v for k, v in schemas.items() if v is not None}
    if kept:
        payload[ANSWERED_SCHEMAS_KEY] = kept
    return payload


def first_questions(requests: dict[str, Any], resume_data: Any) -> dict[str, Any] | None:
    """The suspend payload that asks a tool's declared ``requests`` (``inputRequests``) still
    unanswered in ``resume_data``, before its handler runs; None once every one is answered."""
    answers = answers_in(resume_data)
    missing = {k: r for k, r in requests.items() if k not in answers}
    if not missing:
        return None
    answered = {k: v for k, v in answers.items() if k in requests}
    return {**suspend_payload(missing, answered, requests), BEFORE_RUN_KEY: True}


def before_run(payload: Any) -> bool:
    """True when a suspend payload asks a tool's declared ``inputRequests`` (the handler has
    not started: once they are answered the run starts, see :func:`first_questions`)."""
    return isinstance(payload, dict) and payload.get(BEFORE_RUN_KEY) is True


AskFn = Callable[[str, dict[str, Any]], Any]


def answering(
    answers: dict[str, Any], ask: AskFn | None = None
) -> Callable[[Any, Any], dict[str, Any] | None]:
    """An ``on_suspend`` that answers a handler's requests from ``answers`` (``toolctl test``
    cases, ``toolctl run --answer``), round after round, asking ``ask(key, request)`` for the
    ones missing (a terminal prompt); None (the run stays suspended) when one stays missing."""

    def on_suspend(payload: Any, resume_schema: Any) -> dict[str, Any] | None:
        asked = pending_requests(payload)
        if asked is None:
            return None
        requests, answered = asked
        for key, request in requests.items():
            if key not in answers and ask is not None:
                answers[key] = ask(key, request)
        if not set(requests) <= set(answers):
            return None
        # The answers this callback gave stay its own (the payload it is shown has the secret
        # fields of earlier answers scrubbed): the payload's only fill what it never gave.
        given = {k: answers[k] for k in [*answered, *requests] if k in answers}
        return {ANSWERS_KEY: {**answered, **given}}

    return on_suspend
