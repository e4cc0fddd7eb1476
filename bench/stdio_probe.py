"""``toolctl serve`` spoken to over its bare stdio pipe: one JSON-RPC message per line, no SDK.

Shared by ``bench_serve.py`` (tools/list round trips) and the server tests (what reaches the
wire); the bench imports it as a sibling script, the tests as ``bench.stdio_probe``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def wire(*messages: dict[str, Any]) -> bytes:
    """``messages`` as the stdio transport frames them: one JSON line each."""
    return "".join(json.dumps(m) + "\n" for m in messages).encode()


class RawServe:
    """A ``toolctl serve`` subprocess (or ``python -c SCRIPT`` with ``script``) in ``cwd``."""

    def __init__(self, cwd: Path, *, script: str | None = None, stderr: Any = None) -> None:
        argv = ["-c", script] if script is not None else ["-m", "toolctl", "serve"]
        self.proc = subprocess.Popen(
            [sys.executable, *argv],
            cwd=cwd,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE if stderr is None else stderr,
        )

    def send(self, data: bytes) -> None:
        """Write ``data`` (see :func:`wire`) onto the server's stdin."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def reply(self) -> Any:
        """The next line the server writes, parsed (every line on the wire is JSON)."""
        assert self.proc.stdout is not None
        return json.loads(self.proc.stdout.readline())

    def rpc(self, message: dict[str, Any]) -> Any:
        """Send one message; its reply when it is a request (it has an id), else None."""
        self.send(wire(message))
        return self.reply() if "id" in message else None

    def close(self, timeout: float = 30) -> tuple[list[Any], str]:
        """Close stdin (the server then exits) and return the rest of the wire, parsed, and
        the server's stderr."""
        rest, err = self.proc.communicate(timeout=timeout)
        return [json.loads(line) for line in rest.splitlines()], (err or b"").decode()
