"""The child side of ``isolation: subprocess`` (``python -m toolctl.runtime.child``)."""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def _reply(fd: int, kind: str, value: Any = None, message: str = "") -> None:
    from toolctl.runtime import jsondata

    try:
        text = jsondata.dumps({"kind": kind, "value": value, "message": message})
    except (TypeError, ValueError) as exc:
        text = json.dumps(
            {"kind": "error", "value": None, "message": f"tool output is not valid JSON: {exc}"}
        )
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        out.write(text)


def main() -> None:
    # Keep the real stdout for the reply; anything the handler prints goes to stderr.
    reply_fd = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    request = json.loads(sys.stdin.read())
    from toolctl.runtime.limits import apply_in_child, memory_error_message

    # Before the handler is imported: its module-level code is held to the limits too.
    apply_in_child(request.get("limits"))
    from toolctl.runtime.context import SuspendRequested, ToolContext
    from toolctl.runtime.invoke import invoke_sync, wants_context
    from toolctl.runtime.loading import load_callable
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
        )
        args = (request["input"], ctx) if wants_context(fn) else (request["input"],)
        value = invoke_sync(fn, args, None, ctx.abort)
    except SuspendRequested as sus:
        _reply(reply_fd, "suspend", sus.payload)
        return
    except MemoryError:
        _reply(reply_fd, "error", None, memory_error_message(request.get("limits")))
        return
    except Exception as exc:
        _reply(reply_fd, "error", None, f"{type(exc).__name__}: {exc}")
        return
    _reply(reply_fd, "ok", value)


if __name__ == "__main__":
    main()
