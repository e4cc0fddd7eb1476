"""ctx.ask and its helpers: what a handler asks the client, round by round (no front end)."""

from __future__ import annotations

from typing import Any

import pytest

from toolctl.runtime import clientask
from toolctl.runtime.context import SuspendRequested, ToolContext

FORM = clientask.elicitation("Name?", {"type": "object", "properties": {"n": {"type": "string"}}})


def _asked(ctx: ToolContext, requests: dict[str, Any]) -> Any:
    with pytest.raises(SuspendRequested) as caught:
        ctx.ask(requests)
    return caught.value.payload


def test_ask_suspends_with_what_is_missing_and_returns_once_answered() -> None:
    requests = {"who": FORM, "where": clientask.roots()}
    payload = _asked(ToolContext(run_id="r", tool_name="t"), requests)
    assert clientask.pending_requests(payload) == (requests, {})
    # one answer so far: only the other is asked, the first travels along
    partial = {clientask.ANSWERS_KEY: {"who": {"action": "accept", "content": {"n": "Ada"}}}}
    payload = _asked(ToolContext(run_id="r", tool_name="t", resume_data=partial), requests)
    assert clientask.pending_requests(payload) == (
        {"where": clientask.roots()},
        partial[clientask.ANSWERS_KEY],
    )
    full = {clientask.ANSWERS_KEY: {**partial[clientask.ANSWERS_KEY], "where": {"roots": []}}}
    ctx = ToolContext(run_id="r", tool_name="t", resume_data=full)
    assert ctx.ask(requests)["who"]["content"] == {"n": "Ada"}
    assert ctx.list_roots(key="where") == []


def test_a_request_this_api_does_not_know_is_refused() -> None:
    with pytest.raises(ValueError, match="must be one of"):
        ToolContext(run_id="r", tool_name="t").ask({"x": {"method": "tools/call"}})


def test_answering_answers_round_after_round_and_prompts_for_the_rest() -> None:
    prompted: list[str] = []

    def ask(key: str, request: dict[str, Any]) -> Any:
        prompted.append(key)
        return {"roots": []}

    on_suspend = clientask.answering({"who": {"action": "decline"}}, ask)
    payload = {clientask.REQUESTS_KEY: {"who": FORM, "where": clientask.roots()}}
    data = on_suspend(payload, None)
    assert data == {clientask.ANSWERS_KEY: {"who": {"action": "decline"}, "where": {"roots": []}}}
    assert prompted == ["where"]
    assert clientask.answering({})(payload, None) is None  # nothing to answer with
    assert clientask.answering({})({"plain": "suspend"}, None) is None  # not a request
