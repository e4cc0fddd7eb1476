"""The same guarantees whatever the front end (issue 10, items 2, 5, 6 and 7): secrets never leave
through error text, handler misbehaviour is a clean failure, approval binds everything the run
will use (keyed MAC), and a failed handler's traceback is kept for the developer only."""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sqlite3
import stat
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from bench.stdio_probe import INIT, INITIALIZED, RawServe, wire

from toolctl.cli.app import run as cli
from toolctl.registry import Registry
from toolctl.runtime import RunResult, RunStateError, RunStatus, api

from .conftest import FIXTURES

TOOLS = """\
toolctl: 1
tools:
  - name: login
    description: Log in with a pin.
    handler: guard_handlers:login
    inputSchema:
      type: object
      properties:
        user: {type: string}
        pin: {type: string, x-sensitive: true}
        code: {type: integer, writeOnly: true}
      required: [user, pin]
  - name: chatty
    description: Logs the pin through its own logger.
    handler: guard_handlers:chatty
    inputSchema:
      type: object
      properties:
        pin: {type: string, x-sensitive: true}
        threaded: {type: boolean}
        late: {type: number}
      required: [pin]
  - name: achatty
    description: Logs the pin through its own logger, late, ignoring cancellation.
    handler: guard_handlers:achatty
    inputSchema:
      type: object
      properties:
        pin: {type: string, x-sensitive: true}
        late: {type: number}
      required: [pin]
  - name: gated_chatty
    description: Logs the pin through its own logger, once approved.
    handler: guard_handlers:chatty
    requireApproval: true
    inputSchema:
      type: object
      properties:
        pin: {type: string, x-sensitive: true}
      required: [pin]
  - name: exit0
    description: Raises SystemExit(0).
    handler: guard_handlers:exit0
    inputSchema: {type: object}
  - name: aexit0
    description: Raises SystemExit(0), async.
    handler: guard_handlers:aexit0
    inputSchema: {type: object}
  - name: lexit0
    description: Returns a coroutine that raises SystemExit(0).
    handler: guard_handlers:lexit0
    inputSchema: {type: object}
  - name: ltimed
    description: Returns a coroutine that needs a current task.
    handler: guard_handlers:ltimed
    inputSchema: {type: object}
  - name: int_keys
    description: Returns a dict with an integer key.
    handler: guard_handlers:int_keys
    inputSchema: {type: object}
  - name: noisy
    description: Writes to file descriptor 1.
    handler: guard_handlers:noisy
    inputSchema: {type: object}
  - name: escapes
    description: Returns text with terminal escape sequences.
    handler: guard_handlers:escapes
    inputSchema: {type: object}
  - name: where
    description: Works in the sandbox of its request context.
    handler: guard_handlers:where
    requireApproval: true
    inputSchema:
      type: object
      properties: {path: {type: string}}
      required: [path]
    requestContextSchema:
      type: object
      properties: {sandbox: {type: string}}
      required: [sandbox]
"""

PIN = "4711-open-sesame"
CODE = 98765431


@pytest.fixture
def greg(make_registry: Callable[[dict[str, str]], Registry]) -> Registry:
    return make_registry({"guard.yaml": TOOLS})


def _cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def _toolctl(project: Path, *argv: str, **kw: object) -> subprocess.CompletedProcess[str]:
    return _python(project, "-m", "toolctl", *argv, **kw)


def _python(project: Path, *argv: str, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURES), *sys.path])}
    return subprocess.run(  # type: ignore[call-overload, no-any-return]
        [sys.executable, *argv],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        **kw,
    )


# ---------------------------------------------------------------- 2: secrets in error text


def test_a_secret_quoted_in_an_error_never_leaves_the_handler(
    greg: Registry, caplog: pytest.LogCaptureFixture
) -> None:
    from toolctl.server.results import call_result

    caplog.set_level(logging.DEBUG)
    result = greg.call("login", {"user": "ann", "pin": PIN})
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.message == "RuntimeError: login failed for pin [REDACTED] (user ann)"
    assert result.traceback is not None and "[REDACTED]" in result.traceback
    rec = api.resolve_store(greg).get(result.run_id)
    mcp = call_result(result, greg.get("login"))
    for sink in (
        json.dumps(result.to_dict()),
        json.dumps(rec.public()),
        json.dumps(mcp),
        caplog.text,
    ):
        assert PIN not in sink
    assert "trying pin [REDACTED]" in caplog.text  # the handler's own log line


class _Lines(logging.Handler):
    def __init__(self) -> None:
        super().__init__()
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.lines.append(self.format(record))


@pytest.fixture
def logged() -> Iterator[list[str]]:
    """The lines logged through the root logger, its handlers guarded as the CLI guards them."""
    from toolctl.runtime.redact import guard_log_handlers

    lines = _Lines()
    root = logging.getLogger()
    root.addHandler(lines)
    try:
        guard_log_handlers()
        yield lines.lines
    finally:
        root.removeHandler(lines)


@pytest.mark.parametrize("timeout", [None, 5.0], ids=["in-place", "worker-thread"])
def test_a_secret_a_handler_logs_on_its_own_is_scrubbed(
    greg: Registry, logged: list[str], timeout: float | None
) -> None:
    result = greg.call("chatty", {"pin": PIN}, timeout=timeout)
    logging.getLogger("chatty.app").warning("after the run: %s", PIN)
    assert result.status is RunStatus.SUCCEEDED
    assert logged[0] == "checking pin [REDACTED]"
    assert logged[1] == f"after the run: {PIN}"  # only while a run holding it is in flight


@pytest.mark.parametrize("tool", ["chatty", "achatty"], ids=["thread", "task"])
def test_a_handler_still_running_after_its_timeout_has_its_secrets_scrubbed(
    greg: Registry, logged: list[str], tool: str
) -> None:
    async def late_line() -> RunResult:
        result = await greg.acall(tool, {"pin": PIN, "late": 0.5}, timeout=0.1)
        for _ in range(200):  # the handler goes on after the run ended timed_out
            if logged:
                break
            await asyncio.sleep(0.02)
        return result

    result = asyncio.run(late_line())
    assert result.status is RunStatus.TIMED_OUT
    assert logged == ["checking pin [REDACTED]"]


@pytest.mark.slow
@pytest.mark.parametrize("front_end", ["run", "approve", "python"])
def test_every_front_end_scrubs_a_secret_a_handler_logs_on_its_own(
    greg: Registry, project: Path, front_end: str
) -> None:
    if front_end == "run":
        done = _toolctl(project, "run", "chatty", "-i", json.dumps({"pin": PIN}))
    elif front_end == "approve":
        pending = greg.call("gated_chatty", {"pin": PIN})
        assert pending.status is RunStatus.AWAITING_APPROVAL
        done = _toolctl(project, "approve", pending.run_id)
    else:  # a program that never set up logging: Python prints through logging.lastResort
        script = f"import toolctl; print(toolctl.load().call('chatty', {{'pin': {PIN!r}}}))"
        done = _python(project, "-c", script)
    assert done.returncode == 0, done.stderr
    assert "checking pin [REDACTED]" in done.stderr and PIN not in done.stderr


def test_a_write_only_number_is_redacted_from_error_text(greg: Registry) -> None:
    result = greg.call("login", {"user": "ann", "pin": PIN, "code": CODE})
    assert result.error is not None and str(CODE) not in result.error.message
    assert result.error.message == "ValueError: code [REDACTED] rejected"
    assert str(CODE) not in (result.traceback or "")


def test_the_cli_never_prints_a_secret_from_an_error(
    greg: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    args = json.dumps({"user": "ann", "pin": PIN})
    code, out, err = _cli(capsys, "run", "login", "-i", args, "--traceback")
    assert code == 1 and "login failed for pin [REDACTED]" in err
    assert PIN not in out + err
    run_id = api.resolve_store(greg).query(tool="login")[0].run_id
    code, out, err = _cli(capsys, "runs", "show", run_id)
    assert code == 0 and PIN not in out + err


# ---------------------------------------------------------------- 5: clean failures


def test_system_exit_0_in_a_handler_is_a_failed_run_with_exit_1(
    greg: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _err = _cli(capsys, "run", "exit0", "--format", "json")
    result = json.loads(out)
    assert code == 1 and result["status"] == "failed"
    assert result["error"]["message"] == "SystemExit: 0"


@pytest.mark.parametrize("tool", ["exit0", "aexit0", "lexit0"])
@pytest.mark.parametrize("via", ["call", "call with timeout", "acall"])
def test_system_exit_never_leaves_the_pipeline(greg: Registry, tool: str, via: str) -> None:
    import asyncio

    if via == "acall":
        result = asyncio.run(greg.acall(tool, {}))
    else:
        result = greg.call(tool, {}, timeout=5 if via == "call with timeout" else None)
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.message == "SystemExit: 0"


def test_an_awaitable_returned_by_a_sync_handler_runs_in_a_task(greg: Registry) -> None:
    # It has a current task (asyncio.timeout needs one), as an async handler has.
    result = greg.call("ltimed", {})
    assert result.status is RunStatus.SUCCEEDED, result.error
    assert result.output == {"ok": True}


@pytest.mark.parametrize("via", ["call", "acall"])
def test_an_output_with_a_non_string_key_is_a_clean_failed_run(greg: Registry, via: str) -> None:
    import asyncio

    result = greg.call("int_keys", {}) if via == "call" else asyncio.run(greg.acall("int_keys", {}))
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "invalid_output"
    assert "object key 1 is not a string" in result.error.message
    assert api.resolve_store(greg).get(result.run_id).status == "failed"


def test_input_from_dev_zero_is_refused_at_the_limit(
    greg: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _out, err = _cli(capsys, "run", "exit0", "--input", "@/dev/zero")
    assert code == 2 and "more than 1048576 bytes" in err
    assert not api.resolve_store(greg).query(tool="exit0")  # the handler never ran


# slow (starts processes): mark @pytest.mark.slow once the marker exists
def test_an_endless_stdin_is_refused_at_the_limit(greg: Registry, project: Path) -> None:
    endless = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        done = _toolctl(project, "run", "exit0", "--input", "-", stdin=endless.stdout)
    finally:
        endless.kill()
        endless.wait()
        assert endless.stdout is not None
        endless.stdout.close()
    assert done.returncode == 2 and "stdin holds more than 1048576 bytes" in done.stderr


# slow (starts processes): mark @pytest.mark.slow once the marker exists
def test_writes_to_fd_1_never_corrupt_json_output(greg: Registry, project: Path) -> None:
    done = _toolctl(project, "run", "noisy", "--format", "json")
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["output"] == {"ok": True}
    assert "raw bytes on fd 1" in done.stderr and "a print" in done.stderr


# slow (starts processes): mark @pytest.mark.slow once the marker exists
def test_escape_sequences_in_a_text_output_are_escaped_on_a_terminal(
    greg: Registry, project: Path
) -> None:
    import pty

    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(FIXTURES), *sys.path])}
    pid, fd = pty.fork()
    if pid == 0:  # the child: toolctl on a terminal
        os.chdir(project)
        os.execve(sys.executable, [sys.executable, "-m", "toolctl", "run", "escapes"], env)
    chunks = []
    while True:
        try:
            chunk = os.read(fd, 4096)
        except OSError:
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.waitpid(pid, 0)
    shown = b"".join(chunks)
    assert b"\x1b" not in shown and b"\x07" not in shown
    assert b"\\u{001b}[31mRED" in shown


# ---------------------------------------------------------------- 6: the approval binding


def _tamper(reg: Registry, run_id: str, **columns: str) -> None:
    db = sqlite3.connect(api.resolve_store(reg).path)
    for column, value in columns.items():
        db.execute(f"UPDATE runs SET {column} = ? WHERE run_id = ?", (value, run_id))
    db.commit()
    db.close()


def test_a_tampered_request_context_is_refused_on_approve(greg: Registry) -> None:
    pending = greg.call("where", {"path": "notes.txt"}, context={"sandbox": "/tmp/box"})
    assert pending.status is RunStatus.AWAITING_APPROVAL
    _tamper(greg, pending.run_id, raw_context='{"sandbox": "/etc"}')
    with pytest.raises(RunStateError, match="key-signed binding"):
        greg.approve(pending.run_id)
    assert api.resolve_store(greg).get(pending.run_id).status == "awaiting_approval"
    assert greg.decline(pending.run_id).status is RunStatus.DECLINED


def test_input_rewritten_with_its_hash_is_refused_on_approve(greg: Registry) -> None:
    from toolctl.runtime import jsondata

    pending = greg.call("where", {"path": "notes.txt"}, context={"sandbox": "/tmp/box"})
    forged = {"path": "/etc/passwd"}
    _tamper(
        greg,
        pending.run_id,
        raw_input=json.dumps(forged),
        input_hash=jsondata.digest(forged),
    )
    with pytest.raises(RunStateError, match="key-signed binding"):
        greg.approve(pending.run_id)


def test_a_suspended_run_with_a_forged_approval_is_refused_on_resume(greg: Registry) -> None:
    # "deploy" needs approval, then suspends; forging the stored approval (or the input, with
    # its hash) of the suspended run is caught before the handler runs again.
    from toolctl.runtime import jsondata

    pending = greg.call("deploy", {"target": "staging"})
    suspended = greg.approve(pending.run_id)
    assert suspended.status is RunStatus.SUSPENDED
    forged = {"target": "prod"}
    rec = api.resolve_store(greg).get(pending.run_id)
    approval = {**(rec.approval or {}), "input_hash": jsondata.digest(forged)}
    _tamper(
        greg,
        pending.run_id,
        raw_input=json.dumps(forged),
        input_hash=jsondata.digest(forged),
        approval=json.dumps(approval),
    )
    with pytest.raises(RunStateError, match="key-signed binding"):
        greg.resume(pending.run_id, {"answer": "yes"})
    assert api.resolve_store(greg).get(pending.run_id).status == "suspended"


def test_an_untampered_run_is_approved_and_the_key_is_private(greg: Registry) -> None:
    pending = greg.call("where", {"path": "notes.txt"}, context={"sandbox": "/tmp/box"})
    done = greg.approve(pending.run_id)
    assert done.status is RunStatus.SUCCEEDED
    assert done.output == {"sandbox": "/tmp/box", "path": "notes.txt"}
    db = api.resolve_store(greg).path
    assert db is not None
    key = db.with_name(db.name + ".key")
    assert stat.S_IMODE(key.stat().st_mode) == 0o600


def test_a_key_readable_by_others_is_not_trusted(greg: Registry) -> None:
    from toolctl.runtime import StateError
    from toolctl.runtime.history.binding import key_path, load_key

    pending = greg.call("where", {"path": "a"}, context={"sandbox": "/tmp/box"})
    db = api.resolve_store(greg).path
    assert db is not None
    key_path(db).chmod(0o644)
    with pytest.raises(StateError, match="readable or writable by other users"):
        load_key(key_path(db))
    assert pending.status is RunStatus.AWAITING_APPROVAL


# ---------------------------------------------------------------- 7: tracebacks


def test_the_traceback_keeps_the_handler_frames_only(greg: Registry) -> None:
    result = greg.call("login", {"user": "ann", "pin": PIN})
    tb = result.traceback
    assert tb is not None
    assert 'guard_handlers.py", line' in tb and "in login" in tb and "in _check" in tb
    assert "toolctl" + os.sep + "runtime" not in tb
    assert tb.rstrip().endswith("RuntimeError: login failed for pin [REDACTED] (user ann)")
    rec = api.resolve_store(greg).get(result.run_id)
    assert rec.traceback == tb
    # never for the model
    assert "guard_handlers.py" not in json.dumps(result.model_output)
    assert "guard_handlers.py" not in json.dumps(rec.error)


def test_runs_show_and_run_traceback_print_it(
    greg: Registry, capsys: pytest.CaptureFixture[str]
) -> None:
    args = json.dumps({"user": "ann", "pin": PIN})
    code, _, err = _cli(capsys, "run", "login", "-i", args)
    assert code == 1 and "guard_handlers.py" not in err  # only when asked
    code, _, err = _cli(capsys, "run", "login", "-i", args, "--traceback")
    assert code == 1 and "handler traceback" in err and "in _check" in err
    run_id = api.resolve_store(greg).query(tool="login")[0].run_id
    code, out, _ = _cli(capsys, "runs", "show", run_id)
    assert code == 0 and 'guard_handlers.py", line' in out and "in _check" in out


# slow (starts processes): mark @pytest.mark.slow once the marker exists
def test_serve_logs_the_traceback_and_never_sends_it(greg: Registry, project: Path) -> None:
    pytest.importorskip("mcp")
    call = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "login", "arguments": {"user": "ann", "pin": PIN}},
    }
    chatty = {
        "jsonrpc": "2.0",
        "id": 3,
        "method": "tools/call",
        "params": {"name": "chatty", "arguments": {"pin": PIN}},
    }
    server = RawServe(project)
    server.send(wire(INIT, INITIALIZED, call, chatty))
    replies = {m["id"]: m for m in (server.reply(), server.reply(), server.reply())}
    _, log = server.close(timeout=45)
    sent = json.dumps(replies[2])
    assert replies[2]["result"]["isError"] is True
    assert "login failed for pin [REDACTED]" in sent
    assert "guard_handlers.py" not in sent and PIN not in sent
    assert 'guard_handlers.py", line' in log and "in _check" in log
    assert "checking pin [REDACTED]" in log  # the handler's own logger
    assert PIN not in log
