"""``isolation: subprocess``: run the handler in a child process that a timeout really stops.

The caller starts a supervisor process (:mod:`toolctl.runtime.execution.isolation.supervisor`, a new
session) that
forks the handler's process and reports back once it has ended. What this guarantees:

* **The run ends when the handler returns.** The reply travels on a pipe of its own; threads and
  processes the handler leaves behind neither delay the run nor survive it.
* **The whole process tree ends** with the run, at its deadline or on cancellation (SIGTERM to
  the supervisor, which kills and reaps everything below it; SIGKILL of both process groups if it
  does not answer within ``STOP_GRACE_S``). On Linux that includes double-forked daemons and
  children in new sessions (a child subreaper); elsewhere, only the handler's process group.
* **Output is bounded.** Every pipe is drained as it fills, so a handler never blocks on a full
  pipe; of its stdout and stderr only the last ``TAIL_BYTES`` are kept, and the run notes how
  much was dropped. A reply over ``MAX_RESULT_BYTES`` fails the run.
* **Limits are hard** (:mod:`toolctl.runtime.execution.isolation.limits`): the handler cannot raise
them.

Not a security sandbox: the handler runs as the same user, with the same files and network.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from toolctl.runtime import jsondata
from toolctl.runtime.context import AbortSignal
from toolctl.runtime.execution.isolation.capture import (
    MAX_RESULT_BYTES,
    Capped,
    Tail,
    read_once,
    size_text,
)
from toolctl.runtime.redact import redact_text

STOP_GRACE_S = 2.0  # how long the supervisor gets to end the tree before it is killed
POLL_S = 0.05  # how often a waiting caller looks at the abort signal
REPORT_HEADER_BYTES = 1024 * 1024  # the supervisor's report beside the reply (tail escaped)
WRITE_BYTES = 64 * 1024


@dataclass
class ChildOutcome:
    """What the child reported: ``kind`` is ok, suspend, error, timeout or cancelled.

    ``output`` is the end of what the handler's processes wrote to stdout and stderr (at most
    ``TAIL_BYTES``, not redacted); ``notes`` are for the run's notes (output dropped, processes
    ended); ``traceback`` the failed handler's own frames (not redacted).
    """

    kind: str
    value: Any = None
    message: str = ""
    output: str = ""
    notes: list[str] = field(default_factory=list)
    traceback: str | None = None


class _Supervisor:
    """The caller's end of a supervisor process: feeds the request, drains the report."""

    def __init__(self, proc: subprocess.Popen[bytes], request: bytes) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.proc = proc
        self.report = Capped(MAX_RESULT_BYTES + REPORT_HEADER_BYTES)
        self.errors = Tail()  # the supervisor's own stderr: a crash of toolctl, not the handler
        self._request = memoryview(request)
        self._sel = selectors.DefaultSelector()
        self._sinks: dict[int, Tail | Capped] = {
            proc.stdout.fileno(): self.report,
            proc.stderr.fileno(): self.errors,
        }
        for fd in self._sinks:
            os.set_blocking(fd, False)
            self._sel.register(fd, selectors.EVENT_READ)
        os.set_blocking(proc.stdin.fileno(), False)
        self._sel.register(proc.stdin.fileno(), selectors.EVENT_WRITE)

    def pump(self, deadline: float | None, abort: AbortSignal | None) -> str:
        """Feed and drain until the supervisor is done ("done"), or "timeout"/"cancelled"."""
        while self._sel.get_map() or self.proc.poll() is None:
            if abort is not None and abort.aborted:
                return "cancelled"
            wait = POLL_S
            if deadline is not None:
                wait = min(wait, deadline - time.monotonic())
                if wait <= 0:
                    return "timeout"
            if not self._sel.get_map():  # both pipes at end of file: it is exiting
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self.proc.wait(wait)
                continue
            for key, _ in self._sel.select(wait):
                self._service(key.fd)
        return "done"

    def _service(self, fd: int) -> None:
        if fd in self._sinks:
            if not read_once(fd, self._sinks[fd]):
                self._sel.unregister(fd)
            return
        try:
            sent = os.write(fd, self._request[:WRITE_BYTES])
        except BlockingIOError:
            return
        except OSError:  # the supervisor is gone; its exit tells the rest
            sent = len(self._request)
        self._request = self._request[sent:]
        if not self._request:
            self._sel.unregister(fd)
            assert self.proc.stdin is not None
            self.proc.stdin.close()

    def lines(self) -> tuple[dict[str, Any], dict[str, Any], bytes] | None:
        """The report: hello line, header, reply bytes; None when it is missing or cut short."""
        if self.report.overflowed:
            return None
        hello, _, rest = self.report.data().partition(b"\n")
        head, sep, body = rest.partition(b"\n")
        try:
            first, header = json.loads(hello), json.loads(head)
        except ValueError:
            return None
        size = header.get("result") if isinstance(header, dict) else None
        if not sep or not isinstance(size, int) or len(body) != max(size, 0):
            return None
        return first, header, body

    def handler_pid(self) -> int | None:
        hello = self.report.data().partition(b"\n")
        try:
            pid = json.loads(hello[0])["pid"] if hello[1] else None
        except (ValueError, KeyError, TypeError):
            return None
        return pid if isinstance(pid, int) and pid > 0 else None

    def stop(self) -> None:
        """End the run's process tree: ask the supervisor, then kill what is left."""
        if self.proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGTERM)
            self.pump(time.monotonic() + STOP_GRACE_S, None)  # it reports, then exits
        self.close()

    def kill_groups(self) -> None:
        """The fallback when the supervisor did not report (it hung, or something killed it):
        SIGKILL the handler's process group, and the supervisor while it is not reaped (its pid
        is its group's id, and stays ours until then)."""
        groups = [self.handler_pid()]
        if self.proc.returncode is None:
            groups.append(self.proc.pid)
        for pgid in groups:
            if pgid is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pgid, signal.SIGKILL)

    def close(self) -> None:
        """Close the pipes and reap the supervisor; kill the groups if it did not report."""
        self._sel.close()
        for pipe in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
            if pipe is not None:
                with contextlib.suppress(OSError):
                    pipe.close()
        if self.proc.returncode is None or self.lines() is None:
            self.kill_groups()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(STOP_GRACE_S)


def run_isolated(
    ref: str,
    python_path: Sequence[str],
    payload: dict[str, Any],
    timeout: float | None,
    abort: AbortSignal,
) -> ChildOutcome:
    """Run ``ref`` in a child process with ``payload`` (input, context, run info)."""
    if not hasattr(os, "fork"):
        return ChildOutcome(
            "error",
            message="isolation: subprocess needs a POSIX system (Linux, macOS); "
            "declare isolation: inprocess to run this tool here",
        )
    env = dict(os.environ)
    paths = [*python_path, *[p for p in sys.path if p]]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    request = jsondata.dumps({"ref": ref, "python_path": list(python_path), **payload})
    deadline = None if timeout is None else time.monotonic() + timeout
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolctl.runtime.execution.isolation.supervisor", str(os.getpid())],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,
        env=env,
    )
    sup = _Supervisor(proc, request.encode("utf-8"))
    try:
        ended = sup.pump(deadline, abort)
    except BaseException:
        sup.stop()
        raise
    if ended != "done":
        sup.stop()
        ended_by = _outcome(sup)  # the supervisor's report, when it made one
        kind, message = (
            ("timeout", "the handler process was killed")
            if ended == "timeout"
            else ("cancelled", "the handler process was stopped")
        )
        return ChildOutcome(kind, message=message, output=ended_by.output, notes=ended_by.notes)
    sup.close()
    return _outcome(sup)


def _notes(header: dict[str, Any]) -> list[str]:
    notes = []
    dropped, kept = header.get("logDropped") or 0, len(header.get("log") or "")
    if dropped:
        notes.append(
            f"the handler wrote {size_text(dropped + kept)} to stdout/stderr; "
            f"only the last {size_text(kept)} were kept"
        )
    left = header.get("left") or []
    if left:
        noun = "process" if len(left) == 1 else "processes"
        how = "started" if header.get("stopped") else "left running"
        notes.append(f"ended {len(left)} {noun} the handler {how}")
    return notes


def _outcome(sup: _Supervisor) -> ChildOutcome:
    report = sup.lines()
    if report is None:
        why = _why(sup.proc.returncode, sup.errors.text())
        return ChildOutcome("error", message=f"the isolated run's supervisor failed ({why})")
    _, header, body = report
    log = header.get("log") or ""
    notes = _notes(header)
    if header.get("tooLarge"):
        message = f"output too large (more than {MAX_RESULT_BYTES} bytes)"
        return ChildOutcome("error", message=message, output=log, notes=notes)
    try:
        reply = json.loads(body) if header["result"] >= 0 else None
    except ValueError:
        reply = None
    if not isinstance(reply, dict) or "kind" not in reply:
        why = _why(header.get("exit"), log)
        message = f"the handler process ended without a result ({why})"
        return ChildOutcome("error", message=message, output=log, notes=notes)
    found = reply.get("traceback")
    return ChildOutcome(
        str(reply["kind"]),
        reply.get("value"),
        str(reply.get("message", "")),
        log,
        notes,
        found if isinstance(found, str) else None,
    )


def _why(code: int | None, log: str) -> str:
    """Why a process ended without replying: its exit status and its last words."""
    if isinstance(code, int) and code < 0:
        return f"killed by signal {-code}"
    lines = log.strip().splitlines()
    return f"exit code {code}" + (f": {redact_text(lines[-1])}" if lines else "")
