"""Handlers for the toolctl serve tests."""

from __future__ import annotations

import asyncio
import logging
import os
import subprocess
import sys
import time
from typing import Any


def add(data: dict[str, Any]) -> dict[str, Any]:
    return {"sum": data["a"] + data["b"]}


def shout(data: dict[str, Any]) -> str:
    print("this print must not reach the JSON-RPC stream")
    os.write(1, b"nor this write to fd 1\n")
    subprocess.run([sys.executable, "-c", "print('nor a child process')"], check=True)
    return data["text"].upper()


def delete_file(data: dict[str, Any]) -> dict[str, Any]:
    return {"deleted": data["path"]}


def greet(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    if ctx.resume_data is None:
        ctx.suspend({"question": "What is your name?"})
    return {"greeting": f"Hello, {ctx.resume_data['name']}!"}


async def sleepy(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    for step in range(int(data.get("steps", 50))):
        ctx.progress(step, data.get("steps", 50), f"step {step}")
        await asyncio.sleep(0.1)
    return {"slept": True}


def blocking(data: dict[str, Any]) -> dict[str, Any]:
    time.sleep(float(data.get("seconds", 5)))
    return {"done": True}


def leaky(data: dict[str, Any]) -> dict[str, Any]:
    raise RuntimeError("could not connect to postgres://admin:hunter2@10.0.0.5/prod")


def picture(data: dict[str, Any]) -> dict[str, Any]:
    return {"png": "iVBORw0KGgo=", "url": "https://example.com/cat.png", "caption": "a cat"}


def chores(data: dict[str, Any]) -> dict[str, Any]:
    time.sleep(float(data.get("seconds", 0.3)))
    return {"done": data.get("seconds", 0.3)}


def whoami(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    return {"user": ctx.request_context["userId"]}


def tally(data: dict[str, Any]) -> dict[str, Any]:
    label = str(data.get("label", "items"))
    return {"label": label, "count": len(label), "scratch": "work notes"}


def sloppy(data: dict[str, Any]) -> dict[str, Any]:
    return {"total": "many"}


def chatty(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    topic = str(data.get("topic", "nothing"))
    ctx.observe.log(f"thinking about {topic}", level=logging.DEBUG)
    ctx.observe.log(f"working on {topic}", step=1)
    ctx.observe.log(f"trouble with {topic}", level=logging.WARNING, password="hunter2")
    logging.getLogger("servetools.plain").warning("plain logging about %s", topic)
    return {"topic": topic}


def route(data: dict[str, Any]) -> dict[str, Any]:
    return {"region": data["region"]}


def survey(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Asks the client two things at once (a form and its roots), then its model (a second
    round), and reports what it got."""
    first = ctx.ask(
        {
            "who": {
                "method": "elicitation/create",
                "params": {
                    "mode": "form",
                    "message": "Who is asking?",
                    "requestedSchema": {
                        "type": "object",
                        "properties": {"name": {"type": "string"}},
                    },
                },
            },
            "where": {"method": "roots/list", "params": {}},
        }
    )
    if first["who"].get("action") != "accept":
        return {"name": None, "roots": [], "summary": "the user declined"}
    reply = ctx.sample([{"role": "user", "content": {"type": "text", "text": "Summarize."}}])
    return {
        "name": first["who"]["content"]["name"],
        "roots": [r["uri"] for r in first["where"].get("roots", [])],
        "summary": reply["content"]["text"],
    }


def survey_later(data: dict[str, Any], ctx: Any) -> str:
    form = {"type": "object", "properties": {"name": {"type": "string"}}}
    got = ctx.ask(
        {
            "who": {
                "method": "elicitation/create",
                "params": {"message": "Who?", "requestedSchema": form},
            },
            "where": {"method": "roots/list", "params": {}},
        }
    )
    return f"{got['who']['content']['name']} at {got['where']['roots'][0]['uri']}"


def welcome_later(data: dict[str, Any], ctx: Any) -> str:
    """Greets by the name its tool's ``inputRequests`` asked before the run was queued."""
    who = ctx.answers["who"]
    return f"Hello, {who['content']['name']}!" if who.get("action") == "accept" else "nobody"


def vanish(data: dict[str, Any]) -> str:
    """Ends the worker process running it, as a crash would."""
    import os

    os._exit(70)


def consult(data: dict[str, Any], ctx: Any) -> str:
    """Asks the client's model only when the client declared sampling."""
    if not ctx.can_ask("sampling/createMessage"):
        return "no model to ask: answered alone"
    reply = ctx.sample([{"role": "user", "content": {"type": "text", "text": "Any advice?"}}])
    return f"the model said: {reply['content']['text']}"
