"""The PostgreSQL run store against SQLite, and ``toolctl serve`` replicas on one PostgreSQL.

1. Recording cost: ``registry.call`` of a trivial tool with the history off (the floor), in an
   SQLite file and in PostgreSQL (a throwaway local cluster), rounds interleaved; the cost of
   recording is each store's time minus the floor.
2. Scale-out: calls/s of N replicas (``toolctl serve --transport http``, each its own process) on
   one PostgreSQL history, N = 1, 2, 3, with the same clients spread over them.

Not a test: it prints numbers and ratios (absolute times depend on the machine).

    python bench/bench_store.py [--calls 500] [--load-calls 300] [--clients 6]
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

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

HANDLER = "def add(args):\n    return {'sum': args['a'] + args['b']}\n"


def project(root: Path) -> Path:
    (root / "tools.d").mkdir(parents=True, exist_ok=True)
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [.]\n")
    (root / "bench_store_handler.py").write_text(HANDLER)
    (root / "tools.d" / "add.yaml").write_text(TOOL)
    return root


def per_call(fns: dict[str, Callable[[], object]], calls: int, rounds: int) -> dict[str, float]:
    """Microseconds per call of each function: rounds interleaved, median round kept."""
    for fn in fns.values():
        for _ in range(50):
            fn()
    times: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(rounds):
        for name, fn in fns.items():
            start = time.perf_counter()
            for _ in range(calls):
                fn()
            times[name].append((time.perf_counter() - start) / calls * 1e6)
    return {name: sorted(values)[len(values) // 2] for name, values in times.items()}


def recording(cluster: pgcluster.Cluster, root: Path, calls: int, rounds: int) -> None:
    import toolctl
    from toolctl.runtime.history.postgres import PostgresStore
    from toolctl.runtime.history.sqlite import SqliteStore

    registry = toolctl.load_project(root)
    sqlite = SqliteStore(root / "state.db")
    postgres = PostgresStore(cluster.create_database("bench_record"))
    args = {"a": 1, "b": 2}
    result = per_call(
        {
            "history off (floor)": lambda: registry.call("add", args, store=False),
            "SQLite": lambda: registry.call("add", args, store=sqlite),
            "PostgreSQL": lambda: registry.call("add", args, store=postgres),
        },
        calls,
        rounds,
    )
    floor = result["history off (floor)"]
    print(f"recording a run, {calls} calls x {rounds} rounds (median round), in-process:")
    print(f"  {'store':22} {'us/call':>8} {'recording us':>13}")
    for name, value in result.items():
        extra = "" if name.startswith("history") else f"{value - floor:13.0f}"
        print(f"  {name:22} {value:8.0f} {extra}")
    ratio = (result["PostgreSQL"] - floor) / max(result["SQLite"] - floor, 1e-9)
    print(f"  PostgreSQL / SQLite recording cost = {ratio:.2f}x")
    sqlite.close()
    postgres.close()


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
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp, pgcluster.running_cluster() as cluster:
        root = project(Path(tmp))
        sys.path.insert(0, str(root))
        recording(cluster, root, args.calls, args.rounds)
        scale_out(cluster, root, args.load_calls, args.clients)


if __name__ == "__main__":
    main()
