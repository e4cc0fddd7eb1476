"""The PostgreSQL run store against SQLite, and ``toolctl serve`` replicas on one PostgreSQL.

1. Recording cost: ``registry.call`` of a trivial tool with the history off (the floor), in an
   SQLite file and in PostgreSQL (a throwaway local cluster), rounds interleaved; the cost of
   recording is each store's time minus the floor. A third store is the peer that tells the
   round trip from the rest: SQLite whose every write also waits for one bare libpq
   ``SELECT 1`` on the same cluster (no psycopg, no pool): what any store in another process
   pays at least. The PostgreSQL server's CPU (its backends' own counters) is printed beside.
   Then the same with calls in flight (``registry.acall``, 8 and 32 at once, gathered on one
   event loop): the history writer commits their writes together (SQLite: one transaction;
   PostgreSQL: one transaction sent as one round trip).
2. Scale-out: calls/s of N replicas (``toolctl serve --transport http``, each its own process) on
   one PostgreSQL history, N = 1, 2, 3, with the same clients spread over them.

Not a test: it prints numbers and ratios (absolute times depend on the machine).

    python bench/bench_store.py [--calls 500] [--load-calls 300] [--clients 6] [--recording-only]
                                [--in-flight 8,32]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "src"))

from bench import pgcluster  # noqa: E402

TOOL = """\
toolctl: 1
name: add
description: Add two numbers.
handler: bench_store_handler:add
mcp:
  annotations: {readOnlyHint: true}
inputSchema:
  type: object
  properties: {a: {type: integer}, b: {type: integer}}
  required: [a, b]
outputSchema:
  type: object
  properties: {sum: {type: integer}}
  required: [sum]
"""

# the same tool without readOnlyHint: its running row is written before the handler runs
PLAIN_TOOL = TOOL.replace("name: add", "name: add_plain").replace(
    "mcp:\n  annotations: {readOnlyHint: true}\n", ""
)
HANDLER = "def add(args):\n    return {'sum': args['a'] + args['b']}\n"


def project(root: Path) -> Path:
    (root / "tools.d").mkdir(parents=True, exist_ok=True)
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [.]\n")
    (root / "bench_store_handler.py").write_text(HANDLER)
    (root / "tools.d" / "add.yaml").write_text(TOOL)
    (root / "tools.d" / "add_plain.yaml").write_text(PLAIN_TOOL)
    return root


BUDGET = 1.5  # PostgreSQL's recording cost per call at most this many times SQLite's (issue 27)
NOISE_US = 5.0  # a recording cost below this (us per call) is noise, not a ratio's denominator


def finished_run(run_id: str) -> Any:
    """A succeeded run's row as a read-only call writes it (views sharing their objects)."""
    from toolctl.runtime.history.records import RunRecord

    shown_in, shown_out = {"a": 1, "b": 2}, {"sum": 3}
    now = time.time()
    return RunRecord(
        run_id=run_id,
        tool="add",
        status="succeeded",
        tool_digest="0" * 64,
        created_at=now,
        started_at=now,
        ended_at=now,
        duration_ms=0.1,
        input=shown_in,
        output=shown_out,
        display={"input": shown_in, "output": shown_out},
        model_output={"type": "json", "value": shown_out},
        notes=[],
    )


def per_call(
    fns: dict[str, Callable[[], object]],
    calls: int,
    rounds: int,
    server: Callable[[], float] | None = None,
    each: int = 1,
) -> dict[str, tuple[float, float]]:
    """Microseconds per call of each function, wall and CPU of this process (threads
    included): rounds interleaved, the median round of each kept. ``server``: seconds of CPU
    the database server has used so far; its median per call lands in :data:`SERVER_CPU`.
    ``each``: calls each function makes (``calls`` of them in a round, all told)."""
    calls = max(1, calls // each)
    for fn in fns.values():
        for _ in range(min(50, calls)):  # warm; a smoke run of a few calls stays quick
            fn()
    walls: dict[str, list[float]] = {name: [] for name in fns}
    cpus: dict[str, list[float]] = {name: [] for name in fns}
    servers: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            used = server() if server else 0.0
            cpu, start = time.process_time(), time.perf_counter()
            for _ in range(calls):
                fn()
            walls[name].append((time.perf_counter() - start) / (calls * each) * 1e6)
            cpus[name].append((time.process_time() - cpu) / (calls * each) * 1e6)
            if server:
                servers[name].append((server() - used) / (calls * each) * 1e6)
    if server:
        SERVER_CPU.update({name: median(values) for name, values in servers.items()})
    return {name: (median(walls[name]), median(cpus[name])) for name in fns}


SERVER_CPU: dict[str, float] = {}  # the last per_call's server CPU per call (us), by name


def backend_cpu(url: str, database: str) -> Callable[[], float]:
    """Seconds of CPU the PostgreSQL backends serving ``database`` have used (their
    ``/proc/PID/schedstat``, in nanoseconds; a backend that exited is left out), through a
    connection of its own to ``url`` (another database: its backend is not counted)."""
    import psycopg

    conn = psycopg.connect(url, autocommit=True)

    def used() -> float:
        rows = conn.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = %s", (database,)
        ).fetchall()
        total = 0
        for (pid,) in rows:
            with contextlib.suppress(OSError):
                total += int(Path(f"/proc/{pid}/schedstat").read_text().split()[0])
        return total / 1e9

    return used


def round_trip_peer(path: Path, url: str) -> Any:
    """An SQLite store whose every write then waits for one bare ``SELECT 1`` on PostgreSQL
    through libpq itself (``psycopg.pq``, blocking: no psycopg layer, no pool)."""
    from psycopg import pq

    from toolctl.runtime.history.sqlite import SqliteStore

    class RoundTrip(SqliteStore):
        def __init__(self) -> None:
            super().__init__(path)
            self.pq = pq.PGconn.connect(url.encode())

        def insert(self, record: Any, *, durable: bool = False) -> None:
            super().insert(record, durable=durable)
            self.pq.exec_(b"SELECT 1")

        def update(self, run_id: str, **kwargs: Any) -> bool:
            done = super().update(run_id, **kwargs)
            self.pq.exec_(b"SELECT 1")
            return done

        def close(self) -> None:
            self.pq.finish()
            super().close()

    return RoundTrip()


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


TOOLS = (("add", "read-only tool, 1 write"), ("add_plain", "plain tool, 2 writes"))


def compare(result: dict[str, tuple[float, float]], title: str) -> list[float]:
    """Print one table of :func:`per_call` results against the floor and the ratios; the
    PostgreSQL/SQLite recording cost ratios (wall, cpu)."""
    floor_wall, floor_cpu = result["history off (floor)"]
    print(title)
    print(f"  {'store':22} {'wall us':>8} {'cpu us':>8} {'rec. wall':>10} {'rec. cpu':>9}")
    for name, (wall, cpu) in result.items():
        extra = (
            ""
            if name.startswith("history")
            else f" {wall - floor_wall:10.0f} {cpu - floor_cpu:9.0f}"
        )
        print(f"  {name:22} {wall:8.0f} {cpu:8.0f}{extra}")
    print(f"  PostgreSQL server cpu per call: {SERVER_CPU['PostgreSQL']:.0f} us")
    (sq_wall, sq_cpu), (pg_wall, pg_cpu) = result["SQLite"], result["PostgreSQL"]
    rt_wall, rt_cpu = result["SQLite + round trip"]
    print(
        "  PostgreSQL / (SQLite + round trip) recording cost:"
        f" wall {(pg_wall - floor_wall) / max(rt_wall - floor_wall, 1e-9):.2f}x,"
        f" cpu {(pg_cpu - floor_cpu) / max(rt_cpu - floor_cpu, 1e-9):.2f}x"
        " (1x: PostgreSQL costs what SQLite plus a bare wait for another process costs)"
    )
    if min(sq_wall - floor_wall, sq_cpu - floor_cpu) < NOISE_US:
        # SQLite's cost within the noise of the floor (a loaded machine): no ratio to judge
        print(
            f"  PostgreSQL / SQLite recording cost: n/a (SQLite's cost is under {NOISE_US:g} us"
            " above the floor in this run: the rounds were too noisy)"
        )
        return []
    wall_ratio = (pg_wall - floor_wall) / (sq_wall - floor_wall)
    cpu_ratio = (pg_cpu - floor_cpu) / (sq_cpu - floor_cpu)
    verdict = "ok" if max(wall_ratio, cpu_ratio) <= BUDGET else "OVER"
    print(
        f"  PostgreSQL / SQLite recording cost: wall {wall_ratio:.2f}x, cpu {cpu_ratio:.2f}x"
        f" (whole call: wall {pg_wall / sq_wall:.2f}x, cpu {pg_cpu / sq_cpu:.2f}x);"
        f" budget <= {BUDGET:.1f}x: {verdict}"
    )
    return [wall_ratio, cpu_ratio]


async def burst(registry: Any, tool: str, store: object, count: int) -> None:
    """``count`` calls of ``tool`` in flight at once (the history writer commits their
    writes together)."""
    args = {"a": 1, "b": 2}
    await asyncio.gather(*(registry.acall(tool, args, store=store) for _ in range(count)))


def recording(
    cluster: pgcluster.Cluster, root: Path, calls: int, rounds: int, in_flight: list[int]
) -> list[float]:
    """Print the recording cost of each store per call, sequential calls and then ``in_flight``
    calls at once; the PostgreSQL/SQLite ratios (wall and CPU, for each tool)."""
    import toolctl
    from toolctl.runtime.history.postgres import PostgresStore
    from toolctl.runtime.history.sqlite import SqliteStore

    registry = toolctl.load_project(root)
    sqlite = SqliteStore(root / "state.db")
    postgres = PostgresStore(cluster.create_database("bench_record"))
    peer = round_trip_peer(root / "peer.db", cluster.url)
    server = backend_cpu(cluster.url, "bench_record")
    stores: dict[str, object] = {
        "history off (floor)": False,
        "SQLite": sqlite,
        "SQLite + round trip": peer,
        "PostgreSQL": postgres,
    }
    args = {"a": 1, "b": 2}
    ratios = []
    print(f"recording a run, {calls} calls x {rounds} rounds (median round), in-process;")
    print("cpu = this process's CPU time (PostgreSQL's server processes not included: 'server')")
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    for tool, what in TOOLS:

        def call(store: object, tool: str = tool) -> Callable[[], object]:
            return lambda: registry.call(tool, args, store=store)

        result = per_call({name: call(s) for name, s in stores.items()}, calls, rounds, server)
        ratios += compare(result, f"{tool} ({what}), one call at a time:")
    # the stores' own part: one finished run's insert, without the call around it
    ids = itertools.count()

    def insert(store: Any) -> Callable[[], object]:
        return lambda: store.insert(finished_run(f"bench-{next(ids)}"))

    alone = per_call({"SQLite": insert(sqlite), "PostgreSQL": insert(postgres)}, calls, rounds)
    (sq_wall, sq_cpu), (pg_wall, pg_cpu) = alone["SQLite"], alone["PostgreSQL"]
    print(
        f"one run's insert alone: SQLite {sq_wall:.0f} us (cpu {sq_cpu:.0f}), PostgreSQL "
        f"{pg_wall:.0f} us (cpu {pg_cpu:.0f}): wall {pg_wall / sq_wall:.2f}x, "
        f"cpu {pg_cpu / sq_cpu:.2f}x"
    )
    # what no SQLite write pays: a round trip to another process (through a psycopg cursor)
    wall, cpu = per_call({"ping": postgres.ping}, calls, rounds)["ping"]
    print(
        f"one PostgreSQL round trip (PostgresStore.ping: SELECT 1): {wall:.0f} us, cpu {cpu:.0f} us"
    )
    loop = asyncio.new_event_loop()
    for count in in_flight:
        for tool, what in TOOLS:

            def gathered(
                store: object, tool: str = tool, count: int = count
            ) -> Callable[[], object]:
                return lambda: loop.run_until_complete(burst(registry, tool, store, count))

            fns = {name: gathered(s) for name, s in stores.items()}
            result = per_call(fns, max(calls, 4 * count), rounds, server, each=count)
            ratios += compare(result, f"{tool} ({what}), registry.acall, {count} in flight:")
    loop.close()
    print(f"load average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    sqlite.close()
    peer.close()
    postgres.close()
    return ratios


@contextlib.contextmanager
def replicas(root: Path, url: str, count: int) -> Iterator[list[str]]:
    env = {**os.environ, "TOOLCTL_STATE": url, "PYTHONPATH": str(HERE.parent / "src")}
    procs, urls = [], []
    try:
        for _ in range(count):
            proc = subprocess.Popen(
                [sys.executable, "-m", "toolctl", "serve", "--transport", "http", "--port", "0"],
                cwd=root,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.PIPE,
                text=True,
                start_new_session=True,
            )
            procs.append(proc)
            assert proc.stderr is not None
            for line in proc.stderr:
                if " on http://" in line:
                    urls.append(line.rsplit(" on ", 1)[1].strip())
                    break
            else:
                raise RuntimeError("a replica did not start")
        yield urls
    finally:
        for proc in procs:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
            if proc.stderr:
                proc.stderr.close()


async def drive(urls: list[str], clients: int, calls: int) -> float:
    """Calls/s of ``clients`` SDK clients (one session each, sequential calls) spread over
    ``urls``, ``calls`` calls in all."""
    from mcp.client import Client

    per_client = calls // clients

    async def client(index: int) -> None:
        async with Client(urls[index % len(urls)], mode="legacy") as c:
            await c.call_tool("add", {"a": 1, "b": 2})  # warm the session
            await ready.wait()
            for i in range(per_client):
                result = await c.call_tool("add", {"a": i, "b": 1})
                assert not result.is_error

    ready = asyncio.Event()
    tasks = [asyncio.create_task(client(i)) for i in range(clients)]
    await asyncio.sleep(1.0)  # every session opened
    start = time.perf_counter()
    ready.set()
    await asyncio.gather(*tasks)
    return per_client * clients / (time.perf_counter() - start)


def scale_out(cluster: pgcluster.Cluster, root: Path, calls: int, clients: int) -> None:
    print(f"\ntools/call over HTTP, {clients} clients, {calls} calls, replicas on one PostgreSQL:")
    print(f"  {'replicas':>8} {'calls/s':>8} {'vs 1':>6}")
    base = None
    for count in (1, 2, 3):
        url = cluster.create_database(f"bench_scale{count}")
        with replicas(root, url, count) as urls:
            rate = asyncio.run(drive(urls, clients, calls))
        base = base or rate
        print(f"  {count:8d} {rate:8.0f} {rate / base:6.2f}")
    print(
        f"  (this machine has {os.cpu_count()} cores, shared by the clients, every replica and "
        "PostgreSQL: past one replica per core the curve is flat; see docs/deployment.md)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=500, help="calls per round (recording)")
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--load-calls", type=int, default=300, help="calls in all (scale-out)")
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--recording-only", action="store_true", help="skip the scale-out measure")
    parser.add_argument(
        "--in-flight", default="8,32", help="concurrent calls to measure, comma-separated ('' none)"
    )
    args = parser.parse_args()
    in_flight = [int(n) for n in args.in_flight.split(",") if n.strip()]
    with tempfile.TemporaryDirectory() as tmp, pgcluster.bench_cluster() as cluster:
        root = project(Path(tmp))
        sys.path.insert(0, str(root))
        recording(cluster, root, args.calls, args.rounds, in_flight)
        if not args.recording_only:
            scale_out(cluster, root, args.load_calls, args.clients)


if __name__ == "__main__":
    main()
