"""``isolation: subprocess`` is real: bounded output, hard limits, the whole tree ends with the run.

Each test starts real processes (a supervisor, a handler, what the handler starts); none of them
asserts a duration. Floods are 2-128 MiB: enough to tell a bounded tail from a full buffer.
"""

# slow: every test here starts processes (mark it `slow` once the marker exists)

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from bench.stdio_probe import INIT, INITIALIZED, RawServe

import toolctl
from toolctl.registry import Registry
from toolctl.runtime import RunStatus, api
from toolctl.runtime.context import AbortSignal
from toolctl.runtime.execution.isolation.caller import run_isolated
from toolctl.runtime.execution.isolation.capture import TAIL_BYTES

from .conftest import FIXTURES, running, write_project

pytestmark = [
    pytest.mark.skipif(
        not sys.platform.startswith("linux"), reason="the guarantees tested are Linux's"
    ),
    pytest.mark.timeout(60),
]

TOOLS = """\
toolctl: 1
tools:
  - name: flood
    description: Floods stdout and stderr.
    handler: rt_isolation:flood
    isolation: subprocess
    timeout: 30
    inputSchema: {type: object}
  - name: spawn_and_return
    description: Starts a long child and returns.
    handler: rt_isolation:spawn_and_return
    isolation: subprocess
    timeout: 20
    inputSchema: {type: object}
  - name: daemonize
    description: Double-forks a daemon.
    handler: rt_isolation:daemonize
    isolation: subprocess
    timeout: 20
    inputSchema: {type: object}
  - name: thread_and_return
    description: Leaves a thread running.
    handler: rt_isolation:thread_and_return
    isolation: subprocess
    timeout: 20
    inputSchema: {type: object}
  - name: kill_supervisor
    description: Kills the process above it.
    handler: rt_isolation:kill_supervisor
    isolation: subprocess
    timeout: 20
    inputSchema: {type: object}
  - name: big_isolated
    description: Returns a huge string.
    handler: rt_handlers:big_output
    isolation: subprocess
    timeout: 20
  - name: fork_and_return
    description: Forks a copy that returns too.
    handler: rt_isolation:fork_and_return
    isolation: subprocess
    timeout: 20
  - name: fail_nested
    description: Raises from a nested function with a secret in the message.
    handler: rt_isolation:fail_nested
    isolation: subprocess
    timeout: 20
    inputSchema:
      type: object
      properties: {token: {type: string, x-sensitive: true}}
  - name: die_loudly
    description: Ends its process without a result, its last words quoting a secret.
    handler: rt_isolation:die_loudly
    isolation: subprocess
    timeout: 20
    inputSchema:
      type: object
      properties: {token: {type: string, x-sensitive: true}}
  - name: raise_limits
    description: Tries to lift its limits.
    handler: rt_isolation:raise_limits
    isolation: subprocess
    timeout: 5
    inputSchema: {type: object}
"""

# Run in a fresh interpreter, so that its peak RSS (ru_maxrss) is this call's and no other test's.
MEASURE = """\
import json, resource, sys, toolctl
reg = toolctl.load()
reg.call("raise_limits", {})  # imports and first-call costs, before the baseline
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
result = reg.call("flood", json.loads(sys.argv[1]), timeout=float(sys.argv[2]))
after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
print(json.dumps({"status": result.status.value, "notes": result.notes,
                  "growth_mib": (after - before) / 1024}))
"""


def _ends(pid: int) -> bool:
    """Whether ``pid`` stops running soon: a SIGKILL sent to a process is not yet its end."""
    for _ in range(500):
        if not running(pid):
            return True
        time.sleep(0.02)
    return False


@pytest.fixture
def iso(make_registry: Callable[[dict[str, str]], Registry]) -> Registry:
    return make_registry({"isolation.yaml": TOOLS})


def _measure(project: Path, inp: dict[str, object], timeout: float) -> dict[str, object]:
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, json.dumps(inp), str(timeout)],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=55,
        check=True,
    )
    return json.loads(done.stdout)  # type: ignore[no-any-return]


def test_a_flood_of_output_costs_the_caller_a_bounded_tail(iso: Registry, project: Path) -> None:
    seen = _measure(project, {"mib": 128}, 30)
    assert seen["status"] == "succeeded"
    assert seen["growth_mib"] < 32, seen  # the 128 MiB were drained, not kept
    assert (
        "the handler wrote 128.0 MiB to stdout/stderr; only the last 64 KiB were kept"
        in seen["notes"]
    )


def test_a_flood_then_a_hang_times_out_with_a_bounded_caller(iso: Registry, project: Path) -> None:
    seen = _measure(project, {"mib": 96, "hang": True}, 5)
    assert seen["status"] == "timed_out"
    assert seen["growth_mib"] < 32, seen


def _peak_rss_mib(pid: int) -> float:
    """The peak resident set size of a live process (VmHWM)."""
    with open(f"/proc/{pid}/status") as fh:
        line = next(line for line in fh if line.startswith("VmHWM:"))
    return int(line.split()[1]) / 1024


def _tools_call(request_id: int, name: str, arguments: dict[str, object]) -> dict[str, object]:
    params = {"name": name, "arguments": arguments}
    return {"jsonrpc": "2.0", "id": request_id, "method": "tools/call", "params": params}


def test_a_flood_leaves_the_mcp_server_bounded(iso: Registry, project: Path) -> None:
    pytest.importorskip("mcp")
    server = RawServe(project, stderr=subprocess.DEVNULL)
    try:
        server.rpc(INIT)
        server.rpc(INITIALIZED)
        server.rpc(_tools_call(2, "raise_limits", {}))  # first-call costs before the baseline
        before = _peak_rss_mib(server.proc.pid)
        reply = server.rpc(_tools_call(3, "flood", {"mib": 128}))
        after = _peak_rss_mib(server.proc.pid)
    finally:
        server.close(timeout=45)
    assert reply["result"]["isError"] is False, reply
    assert after - before < 32, (before, after)


def test_the_tail_of_the_output_is_kept_and_what_was_dropped_is_counted(iso: Registry) -> None:
    payload = {"input": {"mib": 2}, "run_id": "r1", "tool_name": "flood", "limits": {}}
    outcome = run_isolated("rt_isolation:flood", [str(FIXTURES)], payload, 30, AbortSignal())
    assert outcome.kind == "ok" and outcome.value == {"written": 2}
    assert outcome.output.endswith("flood done\n")
    assert len(outcome.output.encode()) == TAIL_BYTES
    assert outcome.notes == [
        "the handler wrote 2.0 MiB to stdout/stderr; only the last 64 KiB were kept"
    ]


def test_a_handler_cannot_lift_its_limits(project: Path) -> None:
    write_project(project, {"isolation.yaml": TOOLS})
    with (project / "toolctl.yaml").open("a", encoding="utf-8") as config:
        config.write("run: {memoryLimitMb: 256}\n")
    result = toolctl.load().call("raise_limits", {})
    assert result.status is RunStatus.SUCCEEDED, result.error
    assert result.output == {
        "as": [256 * 1024 * 1024, 256 * 1024 * 1024],  # soft = hard: neither can be raised
        "cpu": [6, 6],  # timeout 5 s → 5 + 1
        "core": [0, 0],  # no core files
    }


def test_a_handler_that_starts_a_child_and_returns_ends_the_run_and_the_child(
    iso: Registry, tmp_path: Path
) -> None:
    pidfile = tmp_path / "pid"
    result = iso.call("spawn_and_return", {"pidfile": str(pidfile)})
    assert result.status is RunStatus.SUCCEEDED  # not timed_out: its child kept no pipe open
    assert not running(int(pidfile.read_text()))
    assert "ended 1 process the handler left running" in result.notes


def test_a_thread_left_running_does_not_hold_the_run(iso: Registry) -> None:
    result = iso.call("thread_and_return", {})
    assert result.status is RunStatus.SUCCEEDED
    assert result.output == {"ok": True}


def test_only_the_handler_itself_replies_not_a_copy_it_forked(iso: Registry) -> None:
    result = iso.call("fork_and_return", {})
    assert result.status is RunStatus.SUCCEEDED, result.error
    assert result.output == {"who": "the handler"}


def test_a_double_forked_daemon_ends_with_the_run(iso: Registry, tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon"
    result = iso.call("daemonize", {"pidfile": str(pidfile)})
    assert result.status is RunStatus.SUCCEEDED
    assert not running(int(pidfile.read_text()))


def test_a_double_forked_daemon_ends_when_the_run_times_out(iso: Registry, tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon"
    result = iso.call("daemonize", {"pidfile": str(pidfile), "hang": True}, timeout=3)
    assert result.status is RunStatus.TIMED_OUT
    assert not running(int(pidfile.read_text()))
    assert "ended 1 process the handler started" in result.notes


def test_a_cancelled_run_ends_the_daemon_too(iso: Registry, tmp_path: Path) -> None:
    pidfile = tmp_path / "daemon"
    abort = AbortSignal()

    def cancel_once_started() -> None:
        while not pidfile.exists():
            time.sleep(0.01)
        abort.abort("cancelled by the test")

    payload = {
        "input": {"pidfile": str(pidfile), "hang": True},
        "run_id": "r2",
        "tool_name": "daemonize",
        "limits": {},
    }
    canceller = threading.Thread(target=cancel_once_started)
    canceller.start()
    outcome = run_isolated("rt_isolation:daemonize", [str(FIXTURES)], payload, None, abort)
    canceller.join()
    assert outcome.kind == "cancelled"
    assert not running(int(pidfile.read_text()))


def test_a_killed_supervisor_fails_the_run_and_its_group_still_ends(
    iso: Registry, tmp_path: Path
) -> None:
    pidfile = tmp_path / "child"
    result = iso.call("kill_supervisor", {"pidfile": str(pidfile)})
    assert result.status is RunStatus.FAILED and result.error is not None
    assert "supervisor failed (killed by signal 9)" in result.error.message
    assert _ends(int(pidfile.read_text()))  # killed with the handler's group, not reaped by us


def test_a_result_over_the_limit_fails_the_run(iso: Registry) -> None:
    result = iso.call("big_isolated", {"mib": 17})
    assert result.status is RunStatus.FAILED and result.error is not None
    assert "output too large" in result.error.message


CALLER = """\
import sys, toolctl
toolctl.load().call("daemonize", {"pidfile": sys.argv[1], "hang": True})
"""


def test_a_killed_caller_takes_the_tree_with_it(iso: Registry, project: Path) -> None:
    pidfile = project / "daemon"
    caller = subprocess.Popen([sys.executable, "-c", CALLER, str(pidfile)], cwd=project)
    try:
        for _ in range(2500):  # until the daemon is up (the pytest timeout bounds this)
            if pidfile.exists() or caller.poll() is not None:
                break
            time.sleep(0.02)
    finally:
        caller.kill()  # SIGKILL: the caller cannot clean up; its supervisor must
        caller.wait()
    assert _ends(int(pidfile.read_text()))


def test_a_failed_isolated_handler_keeps_its_traceback_redacted(iso: Registry) -> None:
    result = iso.call("fail_nested", {"token": "s3cr3t-t0ken"})
    assert result.status is RunStatus.FAILED and result.traceback is not None
    tb = result.traceback
    assert 'rt_isolation.py", line' in tb and "in fail_nested" in tb and "in _deeper" in tb
    assert "toolctl" + os.sep + "runtime" not in tb  # the handler's frames only
    assert tb.rstrip().endswith("RuntimeError: refused token [REDACTED]")
    assert "s3cr3t-t0ken" not in tb
    assert api.resolve_store(iso).get(result.run_id).traceback == tb
    assert "rt_isolation.py" not in json.dumps(result.model_output)  # never for the model


def test_a_handler_process_that_dies_is_explained_by_its_last_line_scrubbed(
    iso: Registry,
) -> None:
    result = iso.call("die_loudly", {"token": "s3cr3t-t0ken"})
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.message == (
        "the handler process ended without a result (exit code 3: fatal: token [REDACTED] rejected)"
    )
    assert "s3cr3t-t0ken" not in json.dumps(api.resolve_store(iso).get(result.run_id).public())
