"""Memory of idle Streamable HTTP sessions (protocol 2025-11-25): RSS per session, and what
``--max-sessions`` bounds.

Starts ``toolctl serve --transport http`` on a free loopback port, opens ``--sessions`` sessions
with one ``initialize`` each and never uses them again (the flood issue 20 describes), and prints
the server's resident memory before and after, per session, and what the default session limit
therefore costs at most. Then it opens as many more and checks the server still admits new
clients (the longest-idle sessions are expired to make room). Not a test: it prints numbers.

    python bench/bench_sessions.py [--sessions 2000]
"""

from __future__ import annotations

import argparse
import http.client
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from serve_common import registry

INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "bench", "version": "0"},
    },
}


def rss_kib(pid: int) -> int:
    """Resident memory of ``pid`` in KiB (Linux /proc)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise RuntimeError("no VmRSS")


def initialize(port: int) -> int:
    """One ``initialize`` POST; the HTTP status."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
    try:
        conn.request(
            "POST",
            "/mcp",
            json.dumps(INIT),
            {"Content-Type": "application/json", "Accept": "application/json, text/event-stream"},
        )
        response = conn.getresponse()
        response.read()
        return response.status
    finally:
        conn.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2000)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="toolctl-bench-sessions-"))
    registry(root, 1)
    limit = args.sessions + 100
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "toolctl",
            "serve",
            "--transport",
            "http",
            "--port",
            "0",
            "--max-sessions",
            str(limit),
        ],
        cwd=root,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stderr is not None
        port = 0
        for line in proc.stderr:
            if " on http://" in line:
                port = int(line.rsplit(":", 1)[1].split("/", 1)[0])
                break
        for _ in range(50):  # warm up: imports, caches, the first sessions
            initialize(port)
        time.sleep(1)
        before = rss_kib(proc.pid)
        statuses = {initialize(port) for _ in range(args.sessions)}
        time.sleep(1)
        after = rss_kib(proc.pid)
        per = (after - before) / args.sessions
        print(
            f"python {sys.version.split()[0]}; {args.sessions} idle sessions, statuses {statuses}"
        )
        print(
            f"RSS {before / 1024:.1f} MiB -> {after / 1024:.1f} MiB: {per:.1f} KiB per idle session"
        )
        print(
            f"default --max-sessions 1000 bounds idle sessions to about {per * 1000 / 1024:.0f} MiB"
        )
        more = {initialize(port) for _ in range(200)}  # past the limit: longest idle expire
        print(f"200 more clients past the limit of {limit}: statuses {more} (200: admitted)")
    finally:
        proc.terminate()
        proc.wait(30)


if __name__ == "__main__":
    main()
