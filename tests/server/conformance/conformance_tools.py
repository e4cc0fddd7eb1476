"""Handlers of the conformance registry: each does what its scenario asks of a server."""

from __future__ import annotations

import time
from typing import Any

# A 1x1 red PNG and a minimal WAV (44-byte header, no samples).
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAF"
    "BQIAX8jx0gAAAABJRU5ErkJggg=="
)
WAV = "UklGRiQAAABXQVZFZm10IBAAAAABAAEAQB8AAIA+AAACABAAZGF0YQAAAAA="


def simple_text(data: dict[str, Any]) -> str:
    return "This is a simple text response for testing."


def slow_text(data: dict[str, Any]) -> str:
    time.sleep(0.6)  # past toolctl.server.answers.QUICK_ANSWER_S: answered on an SSE stream
    return simple_text(data)


def media(data: dict[str, Any]) -> dict[str, Any]:
    return {"png": PNG, "wav": WAV}


def failing(data: dict[str, Any]) -> Any:
    raise RuntimeError("This tool intentionally returns an error for testing")


def with_logging(data: dict[str, Any], ctx: Any) -> str:
    ctx.observe.log("Tool execution started")
    time.sleep(0.05)
    ctx.observe.log("Tool processing data")
    time.sleep(0.05)
    ctx.observe.log("Tool execution completed")
    return "Logging test completed"


def with_progress(data: dict[str, Any], ctx: Any) -> str:
    for step in (0, 50, 100):
        ctx.progress(step, 100)
        if step < 100:
            time.sleep(0.05)
    return "Progress test completed"


def ask(data: dict[str, Any], ctx: Any) -> str:
    """Asks the user (an elicitation form built from the tool's resumeSchema)."""
    if ctx.resume_data is None:
        ctx.suspend({"message": data.get("message", "Please answer")})
    return f"User response: <action: accept, content: {ctx.resume_data}>"


def echo(data: dict[str, Any]) -> dict[str, Any]:
    return {"received": data}


def greet(data: dict[str, Any]) -> str:
    return f"Hello, {data.get('name', 'World')}!"


def slow_compute(data: dict[str, Any], ctx: Any) -> str:
    """Sleeps ``seconds`` (ending early when the run is cancelled)."""
    ctx.abort.wait(float(data.get("seconds", 1)))
    ctx.abort.raise_if_aborted()
    return f"computed {data.get('label', '')} after {data.get('seconds', 1)} s"


def failing_job(data: dict[str, Any], ctx: Any) -> str:
    ctx.abort.wait(1.0)
    raise RuntimeError("the job failed (as it always does)")


def confirm_delete(data: dict[str, Any], ctx: Any) -> str:
    if ctx.resume_data is None:
        ctx.suspend({"question": f"Delete {data.get('path', 'the file')}?"})
    return "deleted" if ctx.resume_data.get("confirm") else "kept"


def _form(message: str, field: str, kind: str) -> dict[str, Any]:
    schema = {"type": "object", "properties": {field: {"type": kind}}, "required": [field]}
    return {
        "method": "elicitation/create",
        "params": {"message": message, "requestedSchema": schema},
    }


_NAME = _form("What is your name?", "name", "string")


def ask_name(data: dict[str, Any], ctx: Any) -> str:
    answer = ctx.ask({"user_name": _NAME})["user_name"]
    return f"Hello, {(answer.get('content') or {}).get('name', 'stranger')}!"


def greet_answered(data: dict[str, Any], ctx: Any) -> str:
    """Greets by the name its tool's ``inputRequests`` asked before the run was queued."""
    answer = ctx.answers["user_name"]
    return f"Hello, {(answer.get('content') or {}).get('name', 'stranger')}!"


def ask_model(data: dict[str, Any], ctx: Any) -> str:
    question = [
        {"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}
    ]
    reply = ctx.sample(question, max_tokens=100, key="capital_question")
    return f"The model said: {reply.get('content', {}).get('text', '')}"


def ask_roots(data: dict[str, Any], ctx: Any) -> str:
    roots = ctx.list_roots(key="client_roots")
    return "Roots: " + ", ".join(str(r.get("uri")) for r in roots)


def ask_three(data: dict[str, Any], ctx: Any) -> str:
    greeting = [{"role": "user", "content": {"type": "text", "text": "Generate a greeting"}}]
    got = ctx.ask(
        {
            "user_name": _NAME,
            "greeting": {
                "method": "sampling/createMessage",
                "params": {"messages": greeting, "maxTokens": 50},
            },
            "client_roots": {"method": "roots/list", "params": {}},
        }
    )
    return f"Got {', '.join(sorted(got))}"


def ask_confirm(data: dict[str, Any], ctx: Any) -> str:
    # The request state is sealed and checked by the server before the handler runs again.
    ctx.ask({"confirm": _form("Please confirm", "ok", "boolean")})
    return "state-ok: confirmed"


def ask_twice(data: dict[str, Any], ctx: Any) -> str:
    name = ctx.ask({"step1": _form("Step 1: What is your name?", "name", "string")})["step1"]
    color = ctx.ask({"step2": _form("Step 2: What is your favorite color?", "color", "string")})
    who = (name.get("content") or {}).get("name")
    return f"{who} likes {(color['step2'].get('content') or {}).get('color')}"


def sampling(data: dict[str, Any], ctx: Any) -> str:
    message = {"role": "user", "content": {"type": "text", "text": data["prompt"]}}
    reply = ctx.sample([message], max_tokens=100)
    return f"LLM response: {reply.get('content', {}).get('text', '')}"


def ask_what_client_can(data: dict[str, Any], ctx: Any) -> str:
    """Asks only what the calling client declared it can answer (ctx.can_ask)."""
    question = [{"role": "user", "content": {"type": "text", "text": "Say hello"}}]
    wanted = {
        "user_name": _NAME,
        "greeting": {
            "method": "sampling/createMessage",
            "params": {"messages": question, "maxTokens": 50},
        },
    }
    asked = {k: r for k, r in wanted.items() if ctx.can_ask(r["method"])}
    if not asked:
        return "This client can answer no question."
    return f"Got {', '.join(sorted(ctx.ask(asked)))}"


def multi_input(data: dict[str, Any], ctx: Any) -> str:
    got = ctx.ask({"name": _NAME, "confirm": _form("Go ahead?", "confirm", "boolean")})
    return f"Got {', '.join(sorted(got))}"


def protocol_error_job(data: dict[str, Any]) -> str:
    """Ends the worker process itself: the run cannot finish, so no tool result exists."""
    import os

    os._exit(70)
