"""One request cannot stall the HTTP server, and idle sessions cannot lock clients out
(issue 20, class 2), on a real loopback server.

* while a hostile ``tools/call`` is being validated, or a synchronous hook sleeps, ``/healthz``
  answers (checked by order: it answers while the call is still in flight);
* ``--max-sessions``: a full server expires its longest-idle session for a new client; with
  every session busy a new one gets 503 with ``Retry-After``.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from .serve_helpers import INIT, INITIALIZED, HttpServer, http_server

pytestmark = pytest.mark.timeout(120)

HOSTILE = "^(?!x)(a|a)+$"  # lookahead: the backtracking fallback, exponential on "aaa...!"
TOOLS = f"""\
toolctl: 1
tools:
  - name: guarded
    description: A pattern that backtracks on hostile input.
    handler: bounded_handlers:echo
    inputSchema:
      type: object
      properties: {{s: {{type: string, pattern: "{HOSTILE}"}}}}
  - name: hooked
    description: A synchronous hook that blocks until the test releases it.
    handler: bounded_handlers:echo
    hooks: {{onInputAvailable: bounded_handlers:blocking_hook}}
    inputSchema: {{type: object}}
"""
HANDLERS = """\
import os, time
from pathlib import Path

def echo(args):
    return args

def blocking_hook(payload):
    here = Path(os.environ["BOUNDED_DIR"])
    (here / "hook-started").write_text("1")
    for _ in range(3000):  # at most 30 s, until the test releases it
        if (here / "release").exists():
            return
        time.sleep(0.01)
"""


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "bounded.yaml").write_text(TOOLS)
    (tmp_path / "bounded_handlers.py").write_text(HANDLERS)
    # a long budget: the hostile call keeps a worker busy while the test asks /healthz
    (tmp_path / "toolctl.yaml").write_text(
        "tools: tools.d\npythonPath: ['.']\nrun: {validationBudgetMs: 3000}\n"
    )
    return tmp_path


def _headers(server: HttpServer, **extra: str) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "Accept": "application/json, text/event-stream",
        "Host": f"127.0.0.1:{server.port}",
        **extra,
    }


class Answer:
    """One HTTP response, read whole (the connection closed)."""

    def __init__(self, conn: http.client.HTTPConnection) -> None:
        try:
            response = conn.getresponse()
            self.status = response.status
            self.headers = {k.lower(): v for k, v in response.getheaders()}
            self.body = response.read().decode()
        finally:
            conn.close()


def _post(server: HttpServer, body: dict[str, Any], **headers: str) -> Answer:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.request("POST", "/mcp", json.dumps(body), _headers(server, **headers))
    return Answer(conn)


def _in_session(session: str) -> dict[str, str]:
    return {"mcp-session-id": session, "mcp-protocol-version": "2025-11-25"}


def _session(server: HttpServer) -> str:
    opened = _post(server, INIT)
    assert opened.status == 200
    session = opened.headers["mcp-session-id"]
    _post(server, INITIALIZED, **_in_session(session))
    return session


def _call(server: HttpServer, session: str, name: str, arguments: dict[str, Any]) -> str:
    body = {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": name, "arguments": arguments},
    }
    return _post(server, body, **_in_session(session)).body


def _healthz(server: HttpServer) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
    conn.request("GET", "/healthz", headers={"Host": f"127.0.0.1:{server.port}"})
    return Answer(conn).status


@contextmanager
def _in_flight(server: HttpServer, name: str, arguments: dict[str, Any]) -> Iterator[list[str]]:
    """A tools/call running in a thread; the list gets its answer once it ends."""
    session = _session(server)
    answer: list[str] = []

    def call() -> None:
        try:
            answer.append(_call(server, session, name, arguments))
        except Exception as exc:  # reported by the assertion on the answer
            answer.append(repr(exc))

    thread = threading.Thread(target=call)
    thread.start()
    try:
        yield answer
    finally:
        thread.join(100)


def _cpu_seconds(pid: int) -> float:
    with open(f"/proc/{pid}/stat") as fh:
        fields = fh.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / 100  # utime + stime, in clock ticks


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="reads /proc")
def test_healthz_answers_while_a_900_byte_call_is_validated(project: Path) -> None:
    arguments = {"s": "a" * 860 + "!"}  # the whole tools/call body is about 900 bytes
    with http_server(project) as server, _in_flight(server, "guarded", arguments) as answer:
        start = _cpu_seconds(server.proc.pid)
        while _cpu_seconds(server.proc.pid) < start + 0.5 and not answer:
            time.sleep(0.05)  # until the validation is burning CPU in the server
        assert not answer, "the hostile call ended before it could be observed"
        assert _healthz(server) == 200
        assert not answer  # /healthz answered while the validation still ran
    assert "refused" in answer[0] and "validationBudgetMs" in answer[0]


def test_healthz_answers_while_a_sync_hook_sleeps(project: Path, monkeypatch: Any) -> None:
    monkeypatch.setenv("BOUNDED_DIR", str(project))
    with http_server(project) as server, _in_flight(server, "hooked", {}) as answer:
        while not (project / "hook-started").exists():
            time.sleep(0.01)
        assert _healthz(server) == 200
        assert not answer  # answered while the hook still blocked
        (project / "release").write_text("1")
    assert '"isError":false' in answer[0].replace(" ", "")


def test_a_full_server_expires_its_longest_idle_session(project: Path) -> None:
    with http_server(project, "--max-sessions", "3") as server:
        sessions = [_session(server) for _ in range(6)]  # idle floods cannot lock clients out
        assert len(set(sessions)) == 6
        listed = {"jsonrpc": "2.0", "id": 3, "method": "tools/list"}
        # expired to make room: its client initializes again (as after an idle expiry)
        assert _post(server, listed, **_in_session(sessions[0])).status == 404
        assert _post(server, listed, **_in_session(sessions[-1])).status == 200


def test_with_every_session_busy_a_new_client_gets_503_and_retry_after(project: Path) -> None:
    with http_server(project, "--max-sessions", "2") as server:
        streams = []
        for session in (_session(server), _session(server)):
            conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=60)
            headers = _headers(server, Accept="text/event-stream", **_in_session(session))
            conn.request("GET", "/mcp", headers=headers)
            assert conn.getresponse().status == 200  # an open stream: the session is busy
            streams.append(conn)
        refused = _post(server, INIT)
        assert refused.status == 503
        assert refused.headers["retry-after"] == "5"
        for conn in streams:
            conn.close()


def test_session_settings_come_from_toolctl_yaml_and_are_checked(project: Path) -> None:
    import subprocess
    import sys

    config = project / "toolctl.yaml"
    config.write_text(config.read_text() + "serve: {maxSessions: 0}\n")
    done = subprocess.run(
        [sys.executable, "-m", "toolctl", "serve", "--transport", "http", "--port", "0"],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2
    assert "serve.maxSessions must be a positive whole number" in done.stderr
