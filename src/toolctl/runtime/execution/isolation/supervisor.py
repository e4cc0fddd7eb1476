"""The supervisor of one ``isolation: subprocess`` run
(``python -m toolctl.runtime.execution.isolation.supervisor``).

::

    caller ──stdin: request──▶ supervisor ──fork──▶ handler process (isolation.child)
    caller ◀──stdout: report── supervisor ◀──result pipe── handler
                                          ◀──log pipe (fds 1, 2)── handler and its children

* The handler replies on a pipe of its own, passed by number, and the run ends when the handler
  process exits: nothing it started can hold the run open by keeping a pipe.
* On Linux the supervisor is a child subreaper
  (:mod:`toolctl.runtime.execution.isolation.proctree`): when the handler exits, or the caller
  sends SIGTERM (deadline, cancellation), every process below it, however it was started, is
  killed and reaped before the report. Elsewhere the handler's process group
  is killed.
* The handler's stdout and stderr are drained as they fill; only the last ``TAIL_BYTES`` are kept.
* Only the supervisor holds the caller's pipes, so the caller reads its report up to end of file.

The report is two JSON lines, ``{"pid": handler pid}`` as soon as the handler is forked and then
the header (exit status, output tail, processes ended), followed by ``header["result"]``
bytes: the handler's reply, or nothing (``-1``) when it ended without one.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import sys
from dataclasses import dataclass, field
from typing import Any

from toolctl.runtime.execution.isolation import proctree
from toolctl.runtime.execution.isolation.capture import (
    MAX_RESULT_BYTES,
    Capped,
    Tail,
    drain,
    read_once,
    write_all,
)

REPLY_HEADER_BYTES = 32  # "<length>\n" in front of the handler's reply


@dataclass
class _State:
    stop: bool = False
    handler: int = 0
    status: int | None = None  # the handler's wait status, once reaped
    log: Tail = field(default_factory=Tail)
    reply: Capped = field(default_factory=lambda: Capped(MAX_RESULT_BYTES + REPLY_HEADER_BYTES))


def _reap(state: _State) -> None:
    """Reap every child that ended (orphans are ours too); note the handler's status."""
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        if pid == state.handler:
            state.status = status


def _fork_handler(request: dict[str, Any], result_w: int, log_w: int, close: list[int]) -> int:
    supervisor = os.getpid()
    pid = os.fork()
    if pid:
        return pid
    try:  # the handler process: own process group, fds 0/1/2 = /dev/null, log, log
        signal.set_wakeup_fd(-1)
        for sig in (signal.SIGCHLD, signal.SIGTERM):
            signal.signal(sig, signal.SIG_DFL)
        os.setpgid(0, 0)
        proctree.die_with_parent(signal.SIGKILL, supervisor)
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        os.dup2(log_w, 1)
        os.dup2(log_w, 2)
        for fd in (null, log_w, *close):
            os.close(fd)
        from toolctl.runtime.execution.isolation.child import run

        run(request, result_w)
    except BaseException:  # toolctl itself failed to start the handler: say why, on the log
        import traceback

        traceback.print_exc()
    finally:
        os._exit(70)


def _supervise(state: _State, result_r: int, log_r: int, wake_r: int) -> None:
    """Drain the pipes until the handler exits or the caller asks to stop."""
    sinks: dict[int, Tail | Capped] = {result_r: state.reply, log_r: state.log}
    with selectors.DefaultSelector() as sel:
        for fd in (result_r, log_r, wake_r):
            os.set_blocking(fd, False)
            sel.register(fd, selectors.EVENT_READ)
        while state.status is None and not state.stop:
            for key, _ in sel.select():
                if key.fd == wake_r:
                    drain(wake_r, Tail(0))
                elif not read_once(key.fd, sinks[key.fd]):
                    sel.unregister(key.fd)  # the handler closed it; its exit is still awaited
            _reap(state)


def _end_tree(state: _State, subreaper: bool) -> list[int]:
    """Kill every descendant left (a subreaper's), or else the handler's process group."""
    if subreaper:  # the group's members are descendants too
        ended = proctree.end_descendants()
    else:
        ended = set()
        proctree.kill_group(state.handler)
        if state.status is None:  # stopped: the handler may have left its group
            with contextlib.suppress(ProcessLookupError):
                os.kill(state.handler, signal.SIGKILL)
            state.status = os.waitpid(state.handler, 0)[1]
        proctree.reap_any()
    return sorted(ended - {state.handler})


def _reply_body(reply: Capped) -> bytes | None:
    """The handler's reply from its frame, or None when it is missing, cut short or too long."""
    if reply.overflowed:
        return None
    data = reply.data()
    head, sep, body = data.partition(b"\n")
    if not sep or not head.isdigit() or len(body) < int(head):
        return None
    return body[: int(head)]


def _header(state: _State, left: list[int] | None, body: bytes | None) -> dict[str, Any]:
    status = state.status
    return {
        "exit": os.waitstatus_to_exitcode(status) if status is not None else None,
        "stopped": state.stop,
        "log": state.log.text(),
        "logDropped": state.log.dropped,
        "left": left,
        "tooLarge": state.reply.overflowed,
        "result": -1 if body is None else len(body),
    }


def main() -> None:
    state = _State()

    def on_term(signum: int, frame: object) -> None:
        state.stop = True

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGCHLD, lambda signum, frame: None)  # wakes the select below
    proctree.die_with_parent(signal.SIGTERM, int(sys.argv[1]))
    subreaper = proctree.become_subreaper()
    request = json.loads(sys.stdin.buffer.read())
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.set_wakeup_fd(wake_w)
    result_r, result_w = os.pipe()
    log_r, log_w = os.pipe()
    if not state.stop:  # else stopped before the handler started: nothing to run or end
        state.handler = _fork_handler(request, result_w, log_w, [result_r, log_r, wake_r, wake_w])
    os.close(result_w)
    os.close(log_w)
    write_all(1, json.dumps({"pid": state.handler or None}).encode() + b"\n")
    left: list[int] = []
    if state.handler:
        _supervise(state, result_r, log_r, wake_r)
        left = _end_tree(state, subreaper)
    drain(result_r, state.reply)
    drain(log_r, state.log)
    _report(state, left if subreaper else None, _reply_body(state.reply))


def _report(state: _State, left: list[int] | None, body: bytes | None) -> None:
    header = json.dumps(_header(state, left, body)).encode()
    with contextlib.suppress(BrokenPipeError):  # the caller is gone; the tree ended anyway
        write_all(1, header + b"\n" + (body or b""))


if __name__ == "__main__":
    main()
