"""tools/call load from wrk, a C HTTP load generator, for ``bench_http.py``.

The SDK client costs far more CPU per call than any of the servers it drives, so on a 2-core
machine it shares the CPU with the server it measures; wrk costs a few microseconds a request.
A Lua script makes each request a JSON-RPC ``tools/call`` with its own id (requests of one
session must not share an id) and counts the answers that are a successful call result, so the
CPU per call divides by calls answered, not requests sent.

Two revisions, two request shapes:

* ``2025-11-25``: one session opened first (``initialize``, ``notifications/initialized``),
  every request carries its ``Mcp-Session-Id``; answers are SSE streams.
* ``2026-07-28``: stateless; each request carries the envelope in ``params._meta`` and the
  routing headers the revision requires (``MCP-Protocol-Version``, ``Mcp-Method``,
  ``Mcp-Name``); answers are plain JSON.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import httpx

LEGACY, MODERN = "2025-11-25", "2026-07-28"
ACCEPT = "application/json, text/event-stream"

LUA = """
wrk.method = "POST"
{headers}
local body_head = {head}
local body_tail = {tail}
local threads = {{}}
local next_thread = 0

function setup(thread)
  thread:set("base", next_thread * 1000000000)
  next_thread = next_thread + 1
  table.insert(threads, thread)
end

function init(args)
  n = 0
  ok = 0
  bad = 0
end

function request()
  n = n + 1
  return wrk.format(nil, nil, nil, body_head .. (base + n) .. body_tail)
end

function response(status, headers, body)
  if status == 200 and string.find(body, '"isError":false', 1, true) then
    ok = ok + 1
    if ok % {every} == 0 then
      io.write("answered ", ok, "\\n")
      io.flush()
    end
  else
    bad = bad + 1
  end
end

function done(summary, latency, requests)
  local good, wrong = 0, 0
  for _, thread in ipairs(threads) do
    good = good + thread:get("ok")
    wrong = wrong + thread:get("bad")
  end
  io.write(string.format("calls-ok %d calls-bad %d p50-us %d p90-us %d p99-us %d\\n", good,
    wrong, latency:percentile(50), latency:percentile(90), latency:percentile(99)))
end
"""

_DONE = re.compile(r"calls-ok (\d+) calls-bad (\d+) p50-us (\d+) p90-us (\d+) p99-us (\d+)")


def available() -> str | None:
    """The path of the ``wrk`` executable, or None when it is not installed."""
    return shutil.which("wrk")


def _lua_string(text: str) -> str:
    return "[==[" + text + "]==]"


def _envelope(revision: str) -> dict[str, object]:
    if revision == LEGACY:
        return {}
    return {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN,
            "io.modelcontextprotocol/clientCapabilities": {},
        }
    }


def open_session(url: str) -> str:
    """A 2025-11-25 session on the server at ``url``, initialized; its id."""
    headers = {"content-type": "application/json", "accept": ACCEPT}
    hello = {
        "jsonrpc": "2.0",
        "id": 0,
        "method": "initialize",
        "params": {
            "protocolVersion": LEGACY,
            "capabilities": {},
            "clientInfo": {"name": "bench-wrk", "version": "1"},
        },
    }
    with httpx.Client(timeout=30) as client:
        answer = client.post(url, json=hello, headers=headers)
        answer.raise_for_status()
        session = answer.headers["mcp-session-id"]
        headers |= {"mcp-session-id": session, "mcp-protocol-version": LEGACY}
        note = {"jsonrpc": "2.0", "method": "notifications/initialized"}
        client.post(url, json=note, headers=headers).raise_for_status()
    return session


def lua_script(path: Path, revision: str, session: str | None, every: int = 10) -> Path:
    """Write the Lua script that makes each wrk request a ``tools/call`` of ``add``, and that
    prints a line every ``every`` calls answered."""
    headers = {"Content-Type": "application/json", "Accept": ACCEPT}
    headers["MCP-Protocol-Version"] = revision
    if revision == MODERN:
        headers |= {"Mcp-Method": "tools/call", "Mcp-Name": "add"}
    if session is not None:
        headers["Mcp-Session-Id"] = session
    params = {"name": "add", "arguments": {"a": 1, "b": 2}, **_envelope(revision)}
    text = json.dumps({"jsonrpc": "2.0", "method": "tools/call", "params": params, "id": 0})
    head, tail = text.rsplit('"id": 0', 1)
    path.write_text(
        LUA.format(
            headers="\n".join(f'wrk.headers["{k}"] = "{v}"' for k, v in headers.items()),
            head=_lua_string(head + '"id": '),
            tail=_lua_string(tail),
            every=every,
        )
    )
    return path


@dataclass(frozen=True)
class WrkRun:
    """What one wrk run reported: calls answered with a result, the others, latencies, and
    the server's CPU seconds over the calls answered in the steady part of the run."""

    ok: int
    bad: int
    p50: float
    p90: float
    p99: float
    steady_calls: int
    steady_cpu: float


def run(
    wrk: str,
    url: str,
    script: Path,
    connections: int,
    seconds: float,
    cpu: Callable[[], float],
) -> WrkRun:
    """Drive ``url`` with ``connections`` keep-alive connections for ``seconds`` (one wrk
    thread: the machine's other core is the server's).

    ``cpu()`` (the server's CPU seconds so far) is read at each line the script prints as
    calls are answered: the CPU per call is measured between the first and the last of them,
    with every connection busy. Measured from wrk's start to its end instead, the requests in
    flight when wrk stops (as many as connections) would cost CPU without being counted as
    answered, a bias of connections / calls.
    """
    argv = [wrk, "-t1", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--timeout", "10s"]
    marks: list[tuple[int, float]] = []
    lines: list[str] = []
    with subprocess.Popen(
        [*argv, "-s", str(script), url], stdout=subprocess.PIPE, text=True
    ) as proc:
        assert proc.stdout is not None
        for line in proc.stdout:
            if line.startswith("answered "):
                marks.append((int(line.split()[1]), cpu()))
            else:
                lines.append(line)
        proc.wait(seconds + 60)
    found = _DONE.search("".join(lines))
    if proc.returncode != 0 or found is None:
        raise SystemExit("wrk failed:\n" + "".join(lines))
    ok, bad, p50, p90, p99 = (int(g) for g in found.groups())
    steady = marks[1:]  # the first mark's interval still has the connections opening
    calls = steady[-1][0] - steady[0][0] if len(steady) > 1 else 0
    used = steady[-1][1] - steady[0][1] if len(steady) > 1 else 0.0
    return WrkRun(ok, bad, p50 / 1e6, p90 / 1e6, p99 / 1e6, calls, used)
