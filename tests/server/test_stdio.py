"""The event-driven stdio transport (issue 7): the same wire as the SDK's, for pipes, regular
files and long lines, with the handler's stray output kept off it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .serve_helpers import INIT, INITIALIZED, RawServe, shout_call, wire

pytestmark = pytest.mark.timeout(60)


def _converse(
    registry: Path, data: bytes, answers: int, script: str | None = None
) -> tuple[list[Any], str]:
    """Send ``data`` to ``toolctl serve``, read ``answers`` replies, then close stdin (closing it
    earlier would end the session and cancel the call)."""
    server = RawServe(registry, script=script)
    server.send(data)
    replies = [server.reply() for _ in range(answers)]
    _, err = server.close(timeout=45)  # every line on stdout is a JSON-RPC message
    return replies, err


def test_a_line_longer_than_a_pipe_buffer_is_one_message(registry_dir: Path) -> None:
    text = "x" * 300_000  # well past the 64 KiB default line limit of an asyncio reader
    replies, err = _converse(registry_dir, wire(INIT, INITIALIZED, shout_call(text)), 2)
    assert replies[1]["result"]["content"] == [{"type": "text", "text": text.upper()}]
    assert "must not reach" in err


def test_invalid_utf8_does_not_end_the_session(registry_dir: Path) -> None:
    broken = b'{"jsonrpc": "2.0", "id": 9, "method": "ping"}\xff\n'
    data = wire(INIT) + broken + wire(INITIALIZED, shout_call("still here"))
    replies, _ = _converse(registry_dir, data, 2)
    assert replies[-1]["result"]["content"] == [{"type": "text", "text": "STILL HERE"}]


def test_stdin_from_a_regular_file_is_served_too(registry_dir: Path, tmp_path: Path) -> None:
    # A file cannot be watched by the event loop: the SDK's own file transport takes over.
    requests = tmp_path / "requests.jsonl"
    requests.write_bytes(wire(INIT))
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "toolctl", "serve"],
            cwd=registry_dir,
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=45,
        )
    # Every line on stdout is a JSON-RPC message: stray output never reaches the wire.
    replies = {m["id"]: m for m in map(json.loads, done.stdout.splitlines()) if "id" in m}
    assert replies[1]["result"]["protocolVersion"] == "2025-11-25"
    assert "Traceback" not in done.stderr


def test_stdin_from_the_null_device_ends_quietly(registry_dir: Path) -> None:
    # asyncio accepts /dev/null as a pipe, then epoll refuses it in a callback that logged a
    # traceback: such a stdin goes to the SDK's file transport, which reads end of input.
    done = subprocess.run(
        [sys.executable, "-m", "toolctl", "serve"],
        cwd=registry_dir,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=45,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == "" and "Traceback" not in done.stderr and "ERROR" not in done.stderr


# The fast transport claims the descriptors through private SDK helpers; whatever a future SDK
# does to them (drops them, changes their signature), ``serve`` falls back to the SDK's own
# transport, which still keeps a handler's stray output off the wire.
_WITHOUT_HELPERS = {
    "missing": ("_claim_fd_gone", "_open_stdin_diversion", "_open_stdout_diversion"),
    # a helper whose signature changed: the SDK's (stream, fd) check in the claim's place
    "changed": ("_is_backed_by_fd", "_open_stdin_diversion", "_open_stdout_diversion"),
}


def _fallback_script(change: str) -> str:
    return (
        "import sys, toolctl.server.stdio as fast\n"
        f"fast.SDK_CLAIM_HELPERS = {_WITHOUT_HELPERS[change]!r}\n"
        "from toolctl.cli import main\n"
        "sys.argv = ['toolctl', 'serve']\n"
        "main()\n"
    )


@pytest.mark.parametrize("change", sorted(_WITHOUT_HELPERS))
def test_serve_falls_back_when_the_sdk_claim_helpers_change(
    registry_dir: Path, change: str
) -> None:
    data = wire(INIT, INITIALIZED, shout_call("fallback"))
    replies, err = _converse(registry_dir, data, 2, _fallback_script(change))
    assert replies[1]["result"]["content"] == [{"type": "text", "text": "FALLBACK"}]
    assert "Traceback" not in err and "must not reach" in err


_DUPLICATE_CALL = (
    b'{"jsonrpc":"2.0","id":2,"method":"tools/call",'
    b'"params":{"name":"shout","arguments":{"text":"a","text":"b"}}}\n'
)


@pytest.mark.parametrize("change", sorted(_WITHOUT_HELPERS))
def test_the_fallback_transport_refuses_duplicate_keys_too(registry_dir: Path, change: str) -> None:
    # The fallback reads stdin on a worker thread: the guard must still see every line.
    data = wire(INIT, INITIALIZED) + _DUPLICATE_CALL
    replies, _ = _converse(registry_dir, data, 2, _fallback_script(change))
    result = replies[1]["result"]
    assert result["isError"] is True
    assert "duplicate key 'text'" in result["content"][0]["text"]
