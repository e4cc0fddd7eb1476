"""``isolation: subprocess``: run the handler in a child process that a timeout really stops.

The child is a new session (its own process group), so a timeout or cancellation kills the
handler and anything it started (SIGTERM, then SIGKILL). Input and result travel as JSON over the
child's stdin/stdout; the handler's own prints go to stderr and cannot corrupt the result.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from toolctl.runtime import jsondata
from toolctl.runtime.context import AbortSignal
from toolctl.runtime.redact import redact_text

KILL_GRACE_S = 0.5
MAX_RESULT_BYTES = 16 * 1024 * 1024
POLL_S = 0.05


@dataclass
class ChildOutcome:
    """What the child reported: ``kind`` is ok, suspend, error, timeout or cancelled."""

    kind: str
    value: Any = None
    message: str = ""


def _kill_group(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM the child's process group, SIGKILL what is left, and close the pipes."""
    for sig, wait in ((signal.SIGTERM, KILL_GRACE_S), (signal.SIGKILL, 2.0)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(wait)
            break
        except subprocess.TimeoutExpired:
            continue
    # The leader is gone; make sure nothing else of its group survives.
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    try:
        proc.communicate(timeout=1.0)
    except (subprocess.TimeoutExpired, ValueError):
        for pipe in (proc.stdin, proc.stdout, proc.stderr):
            if pipe is not None:
                pipe.close()


def run_isolated(
    ref: str,
    python_path: Sequence[str],
    payload: dict[str, Any],
    timeout: float | None,
    abort: AbortSignal,
) -> ChildOutcome:
    """Run ``ref`` in a child process with ``payload`` (input, context, run info)."""
    env = dict(os.environ)
    paths = [*python_path, *[p for p in sys.path if p]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    request = jsondata.dumps({"ref": ref, "python_path": list(python_path), **payload})
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolctl.runtime.child"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    deadline = None if timeout is None else time.monotonic() + timeout
    data = request.encode("utf-8")
    try:
        while True:
            slice_s = (
                POLL_S if deadline is None else max(0.0, min(POLL_S, deadline - time.monotonic()))
            )
            try:
                out, err = proc.communicate(data, timeout=slice_s)
                break
            except subprocess.TimeoutExpired:
                data = None  # type: ignore[assignment]  # stdin is written once
                if abort.aborted:
                    _kill_group(proc)
                    return ChildOutcome("cancelled", message="the handler process was stopped")
                if deadline is not None and time.monotonic() >= deadline:
                    _kill_group(proc)
                    return ChildOutcome("timeout", message="the handler process was killed")
    except BaseException:
        _kill_group(proc)
        raise
    return _outcome(proc.returncode, out, err)


def _outcome(code: int, out: bytes, err: bytes) -> ChildOutcome:
    tail = (
        redact_text(err.decode("utf-8", "replace").strip().splitlines()[-1]) if err.strip() else ""
    )
    if len(out) > MAX_RESULT_BYTES:
        return ChildOutcome(
            "error", message=f"output too large ({len(out)} bytes > limit {MAX_RESULT_BYTES})"
        )
    try:
        reply = json.loads(out.decode("utf-8")) if out.strip() else None
    except ValueError:
        reply = None
    if not isinstance(reply, dict) or "kind" not in reply:
        why = f"exit code {code}" + (f": {tail}" if tail else "")
        if code < 0:
            why = f"killed by signal {-code}"
        return ChildOutcome("error", message=f"the handler process ended without a result ({why})")
    return ChildOutcome(str(reply["kind"]), reply.get("value"), str(reply.get("message", "")))
