"""The event-driven stdio transport (issue 7): the same wire as the SDK's, for pipes, regular
files and long lines, with the handler's stray output kept off it."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .serve_helpers import INIT

pytestmark = pytest.mark.timeout(60)


def _session(text: str) -> list[dict[str, Any]]:
    return [
        INIT,
        {"jsonrpc": "2.0", "method": "notifications/initialized"},
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "tools/call",
            "params": {"name": "shout", "arguments": {"text": text}},
        },
    ]


def _wire(messages: list[dict[str, Any]]) -> str:
    return "".join(json.dumps(m) + "\n" for m in messages)


def _replies(stdout: str) -> dict[int, Any]:
    # Every line on stdout is a JSON-RPC message: stray output never reaches the wire.
    return {m["id"]: m for m in map(json.loads, stdout.splitlines()) if "id" in m}


def _converse(registry: Path, wire: bytes, answers: int) -> tuple[list[Any], str]:
    """Send ``wire`` to ``toolctl serve``, read ``answers`` replies, then close stdin (closing it
    earlier would end the session and cancel the call)."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolctl", "serve"],
        cwd=registry,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(wire)
    proc.stdin.flush()
    replies = [json.loads(proc.stdout.readline()) for _ in range(answers)]
    rest, err = proc.communicate(timeout=45)
    assert all(json.loads(line) for line in rest.splitlines())
    return replies, err.decode()


def test_a_line_longer_than_a_pipe_buffer_is_one_message(registry_dir: Path) -> None:
    text = "x" * 300_000  # well past the 64 KiB default line limit of an asyncio reader
    replies, err = _converse(registry_dir, _wire(_session(text)).encode(), 2)
    assert replies[1]["result"]["content"] == [{"type": "text", "text": text.upper()}]
    assert "must not reach" in err


def test_invalid_utf8_does_not_end_the_session(registry_dir: Path) -> None:
    broken = b'{"jsonrpc": "2.0", "id": 9, "method": "ping"}\xff\n'
    wire = _wire([INIT]).encode() + broken + _wire(_session("still here")[1:]).encode()
    replies, _ = _converse(registry_dir, wire, 2)
    assert replies[-1]["result"]["content"] == [{"type": "text", "text": "STILL HERE"}]


def test_stdin_from_a_regular_file_is_served_too(registry_dir: Path, tmp_path: Path) -> None:
    # A file cannot be watched by the event loop: the SDK's own file transport takes over.
    requests = tmp_path / "requests.jsonl"
    requests.write_text(_wire([INIT]), encoding="utf-8")
    with requests.open("rb") as stdin:
        done = subprocess.run(
            [sys.executable, "-m", "toolctl", "serve"],
            cwd=registry_dir,
            stdin=stdin,
            capture_output=True,
            text=True,
            timeout=45,
        )
    assert _replies(done.stdout)[1]["result"]["protocolVersion"] == "2025-11-25"
    assert "Traceback" not in done.stderr


# The fast transport claims the descriptors through private SDK helpers; whatever a future SDK
# does to them (drops them, changes their signature), ``serve`` falls back to the SDK's own
# transport, which still keeps a handler's stray output off the wire.
_WITHOUT_HELPERS = {
    "missing": "None",
    "changed": "(lambda fd, stream: None, None, None)",
}


@pytest.mark.parametrize("change", sorted(_WITHOUT_HELPERS))
def test_serve_falls_back_when_the_sdk_claim_helpers_change(
    registry_dir: Path, change: str
) -> None:
    script = (
        "import sys, toolctl.server.stdio as fast\n"
        f"fast._claim_helpers = lambda: {_WITHOUT_HELPERS[change]}\n"
        "from toolctl.cli import main\n"
        "sys.argv = ['toolctl', 'serve']\n"
        "main()\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", script],
        cwd=registry_dir,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdin is not None and proc.stdout is not None
    proc.stdin.write(_wire(_session("fallback")).encode())
    proc.stdin.flush()
    replies = [json.loads(proc.stdout.readline()) for _ in range(2)]
    rest, err = proc.communicate(timeout=45)
    assert replies[1]["result"]["content"] == [{"type": "text", "text": "FALLBACK"}]
    assert all(json.loads(line) for line in rest.splitlines())
    assert "Traceback" not in err.decode() and "must not reach" in err.decode()
