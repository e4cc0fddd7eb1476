"""The handler side of ``isolation: subprocess``: runs in the process the supervisor forks.

It sets the resource limits, imports and calls the handler, writes one framed reply on the
result pipe (``<length>\\n<JSON>``, so bytes a left-behind process adds later are ignored) and
ends the process at once (``os._exit``): the run is over when the handler returns, whatever
threads or processes it leaves behind.
"""

from __future__ import annotations

import contextlib
import json
import os
import sys
from typing import Any, NoReturn

from toolctl.runtime.exctext import describe, message_of
from toolctl.runtime.execution.isolation.capture import MAX_RESULT_BYTES, write_all


def frame(kind: str, value: Any = None, message: str = "", traceback: str | None = None) -> bytes:
    """The reply as it travels on the result pipe (``traceback``: the failed handler's frames,
    for the developer; the caller redacts it like an in-process one)."""
    from toolctl.runtime import jsondata

    reply = {"kind": kind, "value": value, "message": message}
    if traceback:
        reply["traceback"] = traceback
    try:
        text = jsondata.dumps(reply)
    except Exception as exc:  # not JSON, or a dict/list subclass whose own methods raise
        text = json.dumps(
            {
                "kind": "error",
                "value": None,
                "message": f"tool output is not valid JSON: {message_of(exc)}",
            }
        )
    body = text.encode("utf-8")
    if len(body) > MAX_RESULT_BYTES:
        limit = MAX_RESULT_BYTES
        body = json.dumps(
            {"kind": "error", "message": f"output too large ({len(body)} bytes > limit {limit})"}
        ).encode("utf-8")
    return b"%d\n%s" % (len(body), body)


def _call(request: dict[str, Any]) -> bytes:
    from toolctl.runtime.execution.isolation.limits import apply_in_child, memory_error_message

    # Before the handler is imported: its module-level code is held to the limits too.
    apply_in_child(request.get("limits"))
    from toolctl.runtime.context import SuspendRequested, ToolContext
    from toolctl.runtime.execution.invoke import invoke_sync, wants_context
    from toolctl.runtime.execution.loading import load_callable
    from toolctl.runtime.result import ApprovalInfo

    try:
        fn = load_callable(request["ref"], request.get("python_path") or ())
        approval = request.get("approval")
        ctx = ToolContext(
            run_id=request["run_id"],
            tool_name=request["tool_name"],
            request_context=request.get("context"),
            timeout=request.get("timeout"),
            resume_data=request.get("resume_data"),
            approval=ApprovalInfo.from_dict(approval) if approval else None,
            client_capabilities=request.get("client_capabilities"),
        )
        args = (request["input"], ctx) if wants_context(fn) else (request["input"],)
        value = invoke_sync(fn, args, None, ctx.abort)
    except SuspendRequested as sus:
        return frame("suspend", sus.payload)
    except MemoryError:
        return frame("error", None, memory_error_message(request.get("limits")))
    except Exception as exc:
        from toolctl.runtime.execution.tracebacks import user_traceback

        return frame("error", None, describe(exc), user_traceback(exc))
    return frame("ok", value)


def run(request: dict[str, Any], result_fd: int) -> NoReturn:
    """Run the handler of ``request`` and report on ``result_fd``; never returns."""
    me, code = os.getpid(), 0
    try:
        reply = _call(request)
    except BaseException as exc:  # SystemExit, KeyboardInterrupt: still a reply, not a silence
        reply = frame("error", None, describe(exc))
    if os.getpid() != me:  # a copy the handler forked came back from it: not the handler's reply
        os._exit(0)
    try:
        write_all(result_fd, reply)
    except OSError:
        code = 1
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()
    os._exit(code)
