"""Handlers for the toolctl test runner's own tests (one planted bug in ``divide``)."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any


def add(args: dict[str, Any]) -> dict[str, Any]:
    return {"sum": args["a"] + args["b"], "terms": [args["a"], args["b"]]}


def divide(args: dict[str, Any]) -> dict[str, Any]:
    # planted bug: b == 0 is allowed by the schema but crashes here
    return {"quotient": args["a"] / args["b"]}


def shout(args: dict[str, Any]) -> dict[str, Any]:
    text = args["text"].upper()
    # planted bug: a text with "!" gets a number where the output schema wants a string
    return {"text": len(text) if "!" in text else text}


def touch(args: dict[str, Any]) -> dict[str, Any]:
    Path(args["path"]).write_text("ran", encoding="utf-8")
    return {"written": args["path"]}


def ask(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    if ctx.resume_data is None:
        ctx.suspend({"question": f"Really send {args['amount']}?"})
    return {"sent": ctx.resume_data["yes"], "amount": args["amount"]}


def nap(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    ctx.abort.wait(args["seconds"])
    ctx.abort.raise_if_aborted()
    return {"slept": args["seconds"]}


def login(args: dict[str, Any]) -> dict[str, Any]:
    return {"user": args["user"], "token": "tok-" + args["user"]}


def sleepy(args: dict[str, Any]) -> dict[str, Any]:
    time.sleep(0.01)
    return {"ok": True}


CALLS: list[dict[str, Any]] = []


def record(args: dict[str, Any]) -> dict[str, Any]:
    CALLS.append(args)
    return {"n": len(CALLS)}


class NotFound(LookupError):
    """The handler's own error: an answer, not a crash."""


def lookup(args: dict[str, Any]) -> dict[str, Any]:
    if args["key"] != "known":
        raise NotFound(f"no entry {args['key']!r}")
    return {"value": 1}


def crawl(args: dict[str, Any], ctx: Any) -> dict[str, Any]:
    ctx.abort.wait(args["seconds"])
    return {"pages": 3}


def survey(data: dict[str, Any], ctx: Any) -> dict[str, Any]:
    """Asks the client in two rounds: a form, then its model."""
    who = ctx.elicit(
        "Who is asking?", {"type": "object", "properties": {"name": {"type": "string"}}}
    )
    reply = ctx.sample([{"role": "user", "content": {"type": "text", "text": "Say hi"}}])
    return {"name": who["content"]["name"], "reply": reply["content"]["text"]}
