"""tools/call over Streamable HTTP under load: ``toolctl serve`` against the SDK's servers.

Starts, as real processes on loopback ports the kernel picks: ``toolctl serve --transport http``
on a registry with one trivial read-only tool, the SDK's high-level ``MCPServer`` serving the same
tool, and a bare low-level SDK ``Server`` (the floor). Each is driven by N concurrent SDK clients
(sessions opened before timing; N = 1, 10, 50 by default), a fixed number of calls per round,
rounds interleaved across the servers so that noise from the rest of the machine falls on each
alike. Prints per N: throughput, p50/p90/p99 latency and the server's CPU time per call (utime +
stime of its process from /proc, before and after), then toolctl's ratios against MCPServer and
the floor. Budgets (against MCPServer, in one run): CPU per call <= 1.00x, throughput >= 1.00x,
p99 <= 1.00x.

    .venv/bin/python bench/bench_http.py [--calls 1200] [--rounds 4] [--clients 1,10,50]

Bounded: every loop has a fixed count, every server is stopped at the end.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path

import anyio
from mcp import Client
from serve_common import LOWLEVEL_TOOL, MCPSERVER_TOOL, http_script, p, registry, script

TICK = os.sysconf("SC_CLK_TCK")
START_TIMEOUT = 60.0
PEER, FLOOR, OURS = "MCPServer", "lowlevel (floor)", "toolctl serve"


class ServerProcess:
    """A server subprocess that announces ``... on http://HOST:PORT/mcp`` on stderr."""

    def __init__(self, argv: list[str], cwd: Path | None = None) -> None:
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.log: list[str] = []
        self.url = ""
        self._announced = threading.Event()
        # Drains stderr for the whole run, so a chatty server never blocks on a full pipe.
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()
        if not self._announced.wait(START_TIMEOUT) or not self.url:
            self.stop()
            raise SystemExit("a server did not start:\n" + "".join(self.log[-30:]))

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            if not self.url and " on http://" in line:
                self.url = line.rsplit(" on ", 1)[1].strip()
                self._announced.set()
        self._announced.set()  # the server exited

    def cpu(self) -> float:
        """The CPU seconds (user + system, all threads) the process has used so far."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / TICK  # utime, stime (fields 14, 15)

    def stop(self) -> None:
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self._reader.join(5)  # it ends at the pipe's end of file
        if self.proc.stderr is not None:
            self.proc.stderr.close()


@dataclass
class Sample:
    """What one server did at one concurrency, summed over the rounds."""

    latencies: list[float] = field(default_factory=list)
    wall: float = 0.0
    cpu: float = 0.0

    @property
    def throughput(self) -> float:
        return len(self.latencies) / self.wall

    @property
    def p99(self) -> float:
        return p(self.latencies, 0.99)

    @property
    def cpu_per_call(self) -> float:
        return self.cpu / len(self.latencies)


async def burst(clients: list[Client], calls: int) -> list[float]:
    """``calls`` tools/call requests spread over ``clients``, each client sequential."""
    latencies: list[float] = []

    async def one(client: Client, count: int) -> None:
        for i in range(count):
            start = time.perf_counter()
            result = await client.call_tool("add", {"a": i, "b": 2})
            latencies.append(time.perf_counter() - start)
            assert not result.is_error, result

    async with anyio.create_task_group() as tg:
        for index, client in enumerate(clients):
            tg.start_soon(one, client, calls // len(clients) + (index < calls % len(clients)))
    return latencies


async def measure(
    servers: dict[str, ServerProcess], levels: list[int], calls: int, rounds: int
) -> dict[int, dict[str, Sample]]:
    samples = {n: {label: Sample() for label in servers} for n in levels}
    async with AsyncExitStack() as stack:
        clients: dict[str, list[Client]] = {}
        for label, server in servers.items():  # every session opened (and warmed) before timing
            clients[label] = [
                await stack.enter_async_context(Client(server.url, mode="legacy"))
                for _ in range(max(levels))
            ]
            await burst(clients[label], 2 * max(levels))
        order = list(servers)
        for _ in range(rounds):
            for n in levels:
                for label in order:
                    sample, server = samples[n][label], servers[label]
                    cpu, start = server.cpu(), time.perf_counter()
                    sample.latencies += await burst(clients[label][:n], calls // rounds)
                    sample.wall += time.perf_counter() - start
                    sample.cpu += server.cpu() - cpu
            order = order[1:] + order[:1]  # no server always goes first
    return samples


def report(samples: dict[int, dict[str, Sample]]) -> None:
    for n, by_server in samples.items():
        count = len(next(iter(by_server.values())).latencies)
        print(f"{n} concurrent client{'s' if n > 1 else ''}, {count} calls per server:")
        print(
            f"  {'server':<18} {'calls/s':>8} {'p50 ms':>7} {'p90 ms':>7} {'p99 ms':>7} "
            f"{'CPU ms/call':>11}"
        )
        for label, s in by_server.items():
            print(
                f"  {label:<18} {s.throughput:8.0f} {statistics.median(s.latencies) * 1e3:7.2f} "
                f"{p(s.latencies, 0.9) * 1e3:7.2f} {s.p99 * 1e3:7.2f} "
                f"{s.cpu_per_call * 1e3:11.2f}"
            )
        ours, peer, floor = by_server[OURS], by_server[PEER], by_server[FLOOR]
        checks = (
            ("CPU/call", ours.cpu_per_call, peer.cpu_per_call, floor.cpu_per_call, "<="),
            ("calls/s", ours.throughput, peer.throughput, floor.throughput, ">="),
            ("p99", ours.p99, peer.p99, floor.p99, "<="),
        )
        for what, mine, theirs, base, sense in checks:
            if not (theirs and base):  # a short run can fall within one CPU clock tick
                print(f"  toolctl / MCPServer {what:<8} = n/a (too few calls to measure)")
                continue
            ratio = round(mine / theirs, 2)  # judged as printed
            ok = ratio <= 1.0 if sense == "<=" else ratio >= 1.0
            print(
                f"  toolctl / MCPServer {what:<8} = {ratio:.2f}x (budget {sense} 1.00x) "
                f"{'OK' if ok else 'OVER'}; toolctl / floor = {mine / base:.2f}x"
            )


def setting() -> str:
    """Which HTTP parser and event loops the servers run on (what is installed decides)."""
    from toolctl.server.run import http_loop

    parser = "httptools" if importlib.util.find_spec("httptools") else "h11"
    loop = "uvloop" if http_loop() else "asyncio"
    return (
        f"uvicorn's HTTP parser: {parser} (every server); event loop: {loop} for toolctl serve, "
        "asyncio for the SDK's servers (as MCPServer.run runs them)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1200, help="calls per server and concurrency")
    parser.add_argument("--rounds", type=int, default=4)
    parser.add_argument("--clients", default="1,10,50", help="concurrency levels, comma-separated")
    args = parser.parse_args()
    levels = [int(n) for n in args.clients.split(",")]
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        small = registry(root / "one", 1)
        argvs: dict[str, tuple[list[str], Path | None]] = {
            FLOOR: ([py, str(script(root, "lowlevel.py", http_script(LOWLEVEL_TOOL)))], None),
            PEER: ([py, str(script(root, "mcpserver.py", http_script(MCPSERVER_TOOL)))], None),
            OURS: ([py, "-m", "toolctl", "serve", "--transport", "http", "--port", "0"], small),
        }
        servers: dict[str, ServerProcess] = {}
        try:
            for label, (argv, cwd) in argvs.items():
                servers[label] = ServerProcess(argv, cwd)
            print(
                f"tools/call over Streamable HTTP, loopback; {args.calls} calls per server and "
                f"concurrency in {args.rounds} interleaved rounds"
            )
            print(f"  {setting()}")
            report(anyio.run(measure, servers, levels, args.calls, args.rounds))
        finally:
            for server in servers.values():
                server.stop()


if __name__ == "__main__":
    main()
