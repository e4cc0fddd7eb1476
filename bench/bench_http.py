"""tools/call over Streamable HTTP under load: ``toolctl serve`` against the SDK's servers.

Starts, as real processes on loopback ports the kernel picks: ``toolctl serve --transport http``
on a registry with one trivial read-only tool, the SDK's high-level ``MCPServer`` serving the same
tool, and a bare low-level SDK ``Server`` (the floor). Each is driven at N concurrent connections
(N = 1, 10, 50 by default) by two load generators in turn: SDK clients (sessions opened before
timing, a fixed number of calls per round) and wrk, a C load generator (``wrkload.py``; a fixed
time per round, protocol 2025-11-25 with a session and 2026-07-28 stateless; skipped, saying so,
when wrk is not installed). Rounds are interleaved across the servers so that noise from the rest
of the machine falls on each alike. Prints per N: throughput, p50/p90/p99 latency and the server's
CPU time per call (utime + stime of its process from /proc before and after a round, divided by
the calls answered in it; the median of the rounds), then toolctl's ratios against MCPServer and
the floor. Budgets (against MCPServer, in one run): CPU per call <= 1.00x, throughput >= 1.00x,
p99 <= 1.00x.

    .venv/bin/python bench/bench_http.py [--calls 1200] [--rounds 4] [--clients 1,10,50]
        [--load sdk,wrk] [--wrk-seconds 2] [--wrk-revisions 2025-11-25,2026-07-28]
        [--baseline CHECKOUT] [--postgres]

``--baseline`` adds a fourth server, ``toolctl serve`` from another checkout's ``src`` (e.g. a
detached worktree of ``main``), in the same interleaved rounds: an A/B of two commits that the
rest of the machine weighs on alike, printed as this checkout's CPU per call / the baseline's.
``--postgres`` adds ``toolctl serve`` on a PostgreSQL run history (a throwaway cluster,
``bench/pgcluster.py``), printed against the same server on SQLite (this process's CPU only: the
PostgreSQL server's own is not counted).

Bounded: every loop has a fixed count or time, every server is stopped at the end.
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
from contextlib import AsyncExitStack, ExitStack
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import wrkload
from mcp import Client
from serve_common import LOWLEVEL_TOOL, MCPSERVER_TOOL, http_script, p, registry, script

TICK = os.sysconf("SC_CLK_TCK")
START_TIMEOUT = 60.0
PEER, FLOOR, OURS = "MCPServer", "lowlevel (floor)", "toolctl serve"
BASE = "toolctl baseline"
ON_PG = "toolctl on pg"  # the same registry with a PostgreSQL run history


class ServerProcess:
    """A server subprocess that announces ``... on http://HOST:PORT/mcp`` on stderr."""

    def __init__(
        self, argv: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
    ) -> None:
        self.proc = subprocess.Popen(
            argv,
            cwd=cwd,
            env=env,
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
    """What one server did at one concurrency: per round, the calls answered, the wall time,
    the server's CPU and the latencies (each call's from the SDK client; wrk's percentiles)."""

    calls: list[int] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)
    cpu_calls: list[int] = field(default_factory=list)  # the calls ``cpu`` was measured over
    wall: float = 0.0
    latencies: list[float] = field(default_factory=list)
    quantiles: list[tuple[float, float, float]] = field(default_factory=list)

    def add(self, calls: int, wall: float, cpu: float, cpu_calls: int | None = None) -> None:
        self.calls.append(calls)
        self.wall += wall
        if cpu_calls is None or cpu_calls > 0:  # None: over all the calls of the round
            self.cpu.append(cpu)
            self.cpu_calls.append(calls if cpu_calls is None else cpu_calls)

    @property
    def count(self) -> int:
        return sum(self.calls)

    @property
    def throughput(self) -> float:
        return self.count / self.wall

    def quantile(self, q: float) -> float:
        if self.latencies:
            return p(self.latencies, q)
        column = {0.5: 0, 0.9: 1, 0.99: 2}[q]  # wrk's own, per round: their median
        return statistics.median(row[column] for row in self.quantiles)

    @property
    def p99(self) -> float:
        return self.quantile(0.99)

    @property
    def cpu_per_call(self) -> float:
        """The median over the rounds of CPU seconds / calls answered (0 without any)."""
        per_call = [c / n for c, n in zip(self.cpu, self.cpu_calls, strict=True) if n]
        return statistics.median(per_call) if per_call else 0.0


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


Samples = dict[int, dict[str, Sample]]


async def measure(
    servers: dict[str, ServerProcess], levels: list[int], calls: int, rounds: int
) -> Samples:
    """SDK clients (2025-11-25 sessions), ``calls`` per server and level over the rounds."""
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
                    latencies = await burst(clients[label][:n], calls // rounds)
                    sample.add(len(latencies), time.perf_counter() - start, server.cpu() - cpu)
                    sample.latencies += latencies
            order = order[1:] + order[:1]  # no server always goes first
    return samples


def measure_wrk(
    servers: dict[str, ServerProcess],
    levels: list[int],
    seconds: float,
    rounds: int,
    revision: str,
    workdir: Path,
) -> Samples:
    """wrk at each level for ``seconds`` per round and server, rounds interleaved."""
    wrk = wrkload.available()
    assert wrk is not None
    scripts = {}
    for index, (label, server) in enumerate(servers.items()):
        session = wrkload.open_session(server.url) if revision == wrkload.LEGACY else None
        lua = workdir / f"wrk-{index}-{revision}.lua"
        scripts[label] = wrkload.lua_script(lua, revision, session)
        wrkload.run(wrk, server.url, scripts[label], max(levels), 1, server.cpu)  # warm up
    samples = {n: {label: Sample() for label in servers} for n in levels}
    order = list(servers)
    for _ in range(rounds):
        for n in levels:
            for label in order:
                sample, server = samples[n][label], servers[label]
                start = time.perf_counter()
                done = wrkload.run(wrk, server.url, scripts[label], n, seconds, server.cpu)
                wall = time.perf_counter() - start
                sample.add(done.ok, wall, done.steady_cpu, done.steady_calls)
                sample.quantiles.append((done.p50, done.p90, done.p99))
                if done.bad:
                    raise SystemExit(f"{label}: {done.bad} calls at {n} connections failed")
        order = order[1:] + order[:1]
    return samples


def report(samples: Samples, unit: str = "client") -> None:
    for n, by_server in samples.items():
        count = next(iter(by_server.values())).count
        print(f"{n} concurrent {unit}{'s' if n > 1 else ''}, {count} calls per server:")
        print(
            f"  {'server':<18} {'calls/s':>8} {'p50 ms':>7} {'p90 ms':>7} {'p99 ms':>7} "
            f"{'CPU ms/call':>11}"
        )
        for label, s in by_server.items():
            print(
                f"  {label:<18} {s.throughput:8.0f} {s.quantile(0.5) * 1e3:7.2f} "
                f"{s.quantile(0.9) * 1e3:7.2f} {s.p99 * 1e3:7.2f} "
                f"{s.cpu_per_call * 1e3:11.2f}"
            )
        ours, peer, floor = by_server[OURS], by_server[PEER], by_server[FLOOR]
        checks = (
            ("CPU/call", ours.cpu_per_call, peer.cpu_per_call, floor.cpu_per_call, "<="),
            ("calls/s", ours.throughput, peer.throughput, floor.throughput, ">="),
            ("p99", ours.p99, peer.p99, floor.p99, "<="),
        )
        if BASE in by_server and ours.cpu_per_call and by_server[BASE].cpu_per_call:
            ratio = ours.cpu_per_call / by_server[BASE].cpu_per_call
            print(f"  toolctl / baseline  CPU/call = {ratio:.2f}x (this checkout / --baseline)")
        if ON_PG in by_server and ours.cpu_per_call and by_server[ON_PG].cpu_per_call:
            ratio = by_server[ON_PG].cpu_per_call / ours.cpu_per_call
            print(
                f"  toolctl on PostgreSQL / on SQLite CPU/call = {ratio:.2f}x "
                "(the PostgreSQL server's own CPU not counted)"
            )
        for what, mine, theirs, base, sense in checks:
            if not (mine and theirs and base):  # a short run can fall within one clock tick
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
    parser.add_argument(
        "--load",
        default="sdk,wrk",
        help="load generators: sdk (SDK clients), wrk (skipped, "
        "saying so, when wrk is not installed)",
    )
    parser.add_argument("--wrk-seconds", type=float, default=2.0, help="per round and server")
    parser.add_argument(
        "--wrk-revisions", default=f"{wrkload.LEGACY},{wrkload.MODERN}", help="comma-separated"
    )
    parser.add_argument(
        "--baseline", type=Path, help="another checkout whose src/ is served too, for an A/B"
    )
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="serve toolctl on a PostgreSQL run history too (a throwaway cluster)",
    )
    args = parser.parse_args()
    levels = [int(n) for n in args.clients.split(",")]
    loads = set(args.load.split(","))
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp, ExitStack() as clusters:
        root = Path(tmp)
        small = registry(root / "one", 1)
        serve = [py, "-m", "toolctl", "serve", "--transport", "http", "--port", "0"]
        lowlevel = script(root, "lowlevel.py", http_script(LOWLEVEL_TOOL))
        mcpserver = script(root, "mcpserver.py", http_script(MCPSERVER_TOOL))
        argvs: dict[str, tuple[list[str], Path | None, dict[str, str] | None]] = {
            FLOOR: ([py, str(lowlevel)], None, None),
            PEER: ([py, str(mcpserver)], None, None),
            OURS: (serve, small, None),
        }
        if args.baseline is not None:
            src = str(args.baseline.resolve() / "src")
            argvs[BASE] = (serve, small, {**os.environ, "PYTHONPATH": src})
        if args.postgres:
            import pgcluster

            cluster = clusters.enter_context(pgcluster.bench_cluster())
            on_pg = registry(root / "pg", 1, state=cluster.create_database("bench_http"))
            argvs[ON_PG] = (serve, on_pg, None)
        servers: dict[str, ServerProcess] = {}
        try:
            for label, (argv, cwd, env) in argvs.items():
                servers[label] = ServerProcess(argv, cwd, env)
            print(f"tools/call over Streamable HTTP, loopback; {setting()}")
            print("CPU per call: the median over the interleaved rounds of the server process's")
            print("CPU (utime + stime from /proc) / the calls it answered in that round")
            if "sdk" in loads:
                print(
                    f"\nSDK clients (protocol 2025-11-25): {args.calls} calls per server and "
                    f"concurrency in {args.rounds} interleaved rounds"
                )
                report(anyio.run(measure, servers, levels, args.calls, args.rounds))
            if "wrk" in loads:
                run_wrk(servers, levels, args, root)
        finally:
            for server in servers.values():
                server.stop()


def run_wrk(
    servers: dict[str, ServerProcess], levels: list[int], args: argparse.Namespace, root: Path
) -> None:
    """The wrk part of the run, or a line saying why there is none."""
    if wrkload.available() is None:
        print("\nwrk: skipped (not installed; e.g. apt-get install wrk)")
        return
    for revision in args.wrk_revisions.split(","):
        print(
            f"\nwrk (one thread, keep-alive connections), protocol {revision}: "
            f"{args.wrk_seconds:g} s per server and concurrency in {args.rounds} interleaved rounds"
        )
        samples = measure_wrk(servers, levels, args.wrk_seconds, args.rounds, revision, root)
        report(samples, unit="connection")


if __name__ == "__main__":
    main()
