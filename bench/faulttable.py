"""The fleet fault table (issue 21): three ``toolctl serve`` replicas and two ``toolctl worker``
processes on one real PostgreSQL, loaded by the official MCP Python client on both protocol
revisions (2025-11-25 sessions and 2026-07-28), while one fault happens per row.

For each row: calls sent / answered / failed visibly (an error result or a client exception)
/ lost (no answer at all, or an answer whose run the history does not have) / duplicate
executions of non-idempotent tools / runs stuck ``running`` past their lease / finished runs
(their handler returned in a process that lived on) recorded as anything but ``succeeded`` /
recovery time (from the end of the fault until every replica answers a call again).

    .venv/bin/python bench/faulttable.py               # the table, 40 calls a row, a 10 s outage
    .venv/bin/python bench/faulttable.py --calls 12 --outage 3

``tests/store/test_fleet_faults.py`` runs the same rows with fewer calls and asserts the zeros.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "src"))

from bench import pgcluster  # noqa: E402
from tests.store.faults import restart  # noqa: E402
from tests.store.fleet import make_project, replica  # noqa: E402
from tests.store.procs import env as child_env  # noqa: E402
from tests.store.procs import kill  # noqa: E402

LEASE = 2  # seconds: every lease (calls and workers) short, so sweeps come quickly
LEGACY, MODERN = "2025-11-25", "2026-07-28"
WORKER = [sys.executable, "-m", "toolctl", "worker"]
CALL_TIMEOUT = 90.0  # a call with no answer by then is lost
# (tool, seconds the handler runs, idempotent)
MIX = [("quick", 0.3, False), ("chore", 1.0, False), ("redo", 1.0, True)]

# The fleet's handler also leaves a marker when it returns (the run "finished").
HANDLERS = """
import os, time

def work(input):
    marks = os.environ["MARKS"]
    with open(os.path.join(marks, input["id"]), "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    time.sleep(input.get("seconds", 0))
    with open(os.path.join(marks, input["id"] + ".done"), "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    return {"id": input["id"]}
"""


@dataclass
class Row:
    """One fault's outcome (see the module doc)."""

    name: str
    sent: int = 0
    answered: int = 0
    failed: int = 0
    lost: int = 0
    duplicates: int = 0
    stuck: int = 0
    misrecorded: int = 0
    recovery_s: float = 0.0
    notes: list[str] = field(default_factory=list)
    seconds: float = 0.0  # how long the row took (load, recovery, replacing the fleet, referee)

    def cells(self) -> list[str]:
        return [
            self.name,
            str(self.sent),
            str(self.answered),
            str(self.failed),
            str(self.lost),
            str(self.duplicates),
            str(self.stuck),
            str(self.misrecorded),
            f"{self.recovery_s:.1f} s",
        ]


HEADER = [
    "fault",
    "sent",
    "answered",
    "failed visibly",
    "lost",
    "duplicate executions",
    "stuck past lease",
    "finished, not succeeded",
    "recovery",
]


def markdown(rows: list[Row]) -> str:
    """The table as Markdown (what docs/deployment.md shows)."""
    lines = ["| " + " | ".join(HEADER) + " |", "|" + "---|" * len(HEADER)]
    lines += ["| " + " | ".join(row.cells()) + " |" for row in rows]
    return "\n".join(lines)


# ---------------------------------------------------------------- the fleet


class Fleet:
    """Replicas and workers on one database, each one that dies replaceable."""

    def __init__(self, root: Path, url: str, replicas: int = 3, workers: int = 2) -> None:
        self.root, self.url = root, url
        self.environ = {"TOOLCTL_LEASE": str(LEASE), "TOOLCTL_STATE_POOL_MAX": "4"}
        self.servers: list[Any] = [None] * replicas
        self.stacks = [contextlib.ExitStack() for _ in range(replicas)]
        self.workers: list[subprocess.Popen[bytes] | None] = [None] * workers
        self.killed_pids: set[int] = set()
        self.stopping: set[int] = set()  # replicas killed or drained in this row

    def start(self) -> None:
        with ThreadPoolExecutor(len(self.servers)) as pool:  # replicas start in parallel
            list(pool.map(self.start_replica, range(len(self.servers))))
        for i in range(len(self.workers)):
            self.start_worker(i)

    def start_replica(self, i: int) -> None:
        stack = self.stacks[i] = contextlib.ExitStack()
        self.servers[i] = stack.enter_context(
            replica(self.root, self.url, "--shutdown-timeout", "15", environ=self.environ)
        )

    def start_worker(self, i: int) -> None:
        # the worker's log, appended to by each one started in slot i (read when a row fails)
        with (self.root / f"worker{i}.log").open("a") as log:
            self.workers[i] = self._worker(log)

    def _worker(self, log: Any) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            [
                sys.executable,
                "-m",
                "toolctl",
                "worker",
                "--lease",
                str(LEASE),
                "--concurrency",
                "4",
                "--shutdown-timeout",
                "15",
            ],
            cwd=self.root,
            env={**child_env(self.root, self.url), **self.environ},
            stdout=subprocess.DEVNULL,
            stderr=log,
            start_new_session=True,
        )

    def urls(self) -> list[str]:
        return [s.url for s in self.servers if s is not None and s.proc.poll() is None]

    def serving(self) -> list[str]:
        """The replicas neither killed nor drained in this row."""
        alive = [(i, s) for i, s in enumerate(self.servers) if s and s.proc.poll() is None]
        return [s.url for i, s in alive if i not in self.stopping]

    def kill_replica(self, i: int) -> None:
        self.killed_pids.add(self.servers[i].proc.pid)
        self.stopping.add(i)
        os.killpg(self.servers[i].proc.pid, signal.SIGKILL)

    def drain_replica(self, i: int) -> None:
        self.stopping.add(i)
        self.servers[i].proc.send_signal(signal.SIGTERM)

    def kill_worker(self, i: int) -> None:
        proc = self.workers[i]
        assert proc is not None
        self.killed_pids.add(proc.pid)
        kill(proc)

    def revive(self) -> None:
        """Replace every replica and worker that has stopped (killed or drained)."""
        gone = [i for i, s in enumerate(self.servers) if s is None or s.proc.poll() is not None]
        for i in gone:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.servers[i].proc.wait(30)
            self.stacks[i].close()
            self.keep_log(i)
        if gone:
            with ThreadPoolExecutor(len(gone)) as pool:
                list(pool.map(self.start_replica, gone))
        self.stopping.clear()
        for i, proc in enumerate(self.workers):
            if proc is None or proc.poll() is not None:
                self.start_worker(i)

    def keep_log(self, i: int) -> None:
        """Append replica ``i``'s server log to ``replica{i}.log`` (read when a row fails)."""
        server = self.servers[i]
        if server is not None:
            with (self.root / f"replica{i}.log").open("a") as fh:
                fh.writelines(server.log)
            server.log.clear()

    def close(self) -> None:
        for i, stack in enumerate(self.stacks):
            stack.close()
            self.keep_log(i)
        for proc in self.workers:
            if proc is not None:
                kill(proc)


# ---------------------------------------------------------------- the cluster


def stop_for(cluster: pgcluster.Cluster, seconds: float) -> None:
    """``pg_ctl stop -m fast``, ``seconds`` down, then started again with the same options."""
    bindir = pgcluster.binaries()
    assert bindir is not None
    opts = shlex.split((cluster.data / "postmaster.opts").read_text())[1:]
    data_at = opts.index("-D")
    options = " ".join(shlex.quote(o) for o in opts[:data_at] + opts[data_at + 2 :])
    pg_ctl = [str(bindir / "pg_ctl"), "-D", str(cluster.data), "-w"]
    log = str(cluster.data.parent / "log")
    quiet = {"stdin": subprocess.DEVNULL, "stdout": subprocess.DEVNULL, "timeout": 60}
    subprocess.run(pgcluster._as_owner([*pg_ctl, "-m", "fast", "stop"]), check=True, **quiet)  # type: ignore[call-overload]
    time.sleep(seconds)
    argv = [*pg_ctl, "-o", options, "-l", log, "start"]
    subprocess.run(pgcluster._as_owner(argv), check=True, **quiet)  # type: ignore[call-overload]


@contextlib.contextmanager
def connection_limit(cluster: pgcluster.Cluster, role: str, limit: int) -> Iterator[None]:
    """The fleet's role may hold at most ``limit`` connections inside the block."""
    import psycopg

    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute(f'ALTER ROLE "{role}" CONNECTION LIMIT {int(limit)}')
        try:
            yield
        finally:
            conn.execute(f'ALTER ROLE "{role}" CONNECTION LIMIT -1')


def fleet_database(cluster: pgcluster.Cluster, name: str) -> str:
    """A fresh database owned by a role of its own that is no superuser (so a connection limit
    applies to it); its URL."""
    import psycopg

    role = f"{name}_role"
    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        conn.execute(f'DROP ROLE IF EXISTS "{role}"')
        conn.execute(f"CREATE ROLE \"{role}\" LOGIN PASSWORD '{pgcluster.PASSWORD}'")
        conn.execute(f'CREATE DATABASE "{name}" OWNER "{role}"')
    return f"postgresql://{role}:{pgcluster.PASSWORD}@127.0.0.1:{cluster.port}/{name}"


# ---------------------------------------------------------------- the load


async def call(url: str, tool: str, mark: str, seconds: float, revision: str) -> dict[str, Any]:
    """One call on a new connection (a 2025-11-25 session, or 2026-07-28 requests); what came
    back: ``answered`` (a success), ``failed`` (an error result or exception) or ``lost``."""
    from mcp.client import Client

    args = {"id": mark, "seconds": seconds}
    mode: dict[str, Any] = {"mode": "legacy"} if revision == LEGACY else {}
    try:
        async with asyncio.timeout(CALL_TIMEOUT):
            async with Client(url, **mode) as client:
                result = await client.call_tool(tool, args)
    except TimeoutError:
        return {"outcome": "lost"}
    except Exception as exc:
        return {"outcome": "failed", "why": f"{type(exc).__name__}: {exc}"[:200]}
    meta = (result.meta or {}).get("dev.toolctl/run", {})
    text = " ".join(getattr(b, "text", "") for b in result.content)[:300]
    outcome = "failed" if result.is_error else "answered"
    return {"outcome": outcome, "run": meta.get("id"), "status": meta.get("status"), "why": text}


Fault = Callable[[Fleet, pgcluster.Cluster], Awaitable[None]]


async def load(
    fleet: Fleet, prefix: str, calls: int, fault: Fault, cluster: Any
) -> tuple[dict[str, tuple[str, dict[str, Any]]], float]:
    """``calls`` calls spread over the replicas, tools and revisions, six at a time, with
    ``fault`` started once a third of them are under way; the outcome by mark and the recovery
    time, probed from the end of the fault on while the rest of the load goes on."""
    urls = fleet.urls()
    gate = asyncio.Semaphore(6)
    outcomes: dict[str, tuple[str, dict[str, Any]]] = {}
    started = asyncio.Event()
    recovery = [0.0]

    async def one(i: int) -> None:
        tool, seconds, _ = MIX[i % len(MIX)]
        revision = LEGACY if (i // len(MIX)) % 2 == 0 else MODERN
        mark = f"{prefix}-{i}"
        async with gate:
            if i >= calls // 3:
                started.set()
            outcomes[mark] = (tool, await call(urls[i % len(urls)], tool, mark, seconds, revision))

    async def inject() -> None:
        await started.wait()
        await asyncio.sleep(0.3)  # calls in flight on every replica
        await fault(fleet, cluster)
        recovery[0] = await recovered(fleet, prefix, time.monotonic())

    await asyncio.gather(inject(), *(one(i) for i in range(calls)))
    return outcomes, recovery[0]


async def recovered(fleet: Fleet, prefix: str, since: float, limit: float = 120.0) -> float:
    """Seconds from ``since`` until a quick call succeeds on every replica that survived the
    fault (a killed or drained one is replaced afterwards, its start-up not counted)."""
    pending = set(fleet.serving())
    n = 0
    deadline = time.monotonic() + limit
    while pending and time.monotonic() < deadline:
        for url in sorted(pending):
            n += 1
            got = await call(url, "quick", f"{prefix}-probe{n}", 0, MODERN)
            if got["outcome"] == "answered":
                pending.discard(url)
        if pending:
            await asyncio.sleep(0.2)
    return max(0.0, time.monotonic() - since)


# ---------------------------------------------------------------- the referee


def settle(url: str, timeout: float = 90.0) -> list[Any]:
    """Every run, once none is left ``running`` (sweeps end the lost ones) or ``timeout``."""
    from toolctl.runtime.history.postgres import PostgresStore

    store = PostgresStore(url, sweep=False)  # the fleet's own sweeps do the work
    try:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not store.query(status="running", limit=1):
                break
            time.sleep(0.5)
        return store.query(limit=100_000)
    finally:
        store.close()


def judge(
    row: Row, outcomes: dict[str, tuple[str, dict[str, Any]]], runs: list[Any], marks: Path
) -> None:
    """Fill ``row``'s counts from the calls' outcomes, the run history and the markers."""
    now = time.time()
    by_mark = {(r.input or {}).get("id"): r for r in runs}
    for mark, (tool, got) in outcomes.items():
        row.sent += 1
        rec = by_mark.get(mark)
        if got["outcome"] == "lost" or (got.get("run") and rec is None):
            row.lost += 1
            row.notes.append(f"{mark}: lost ({got}); its run: {_summary(rec)}")
        elif got["outcome"] == "answered":
            row.answered += 1
        else:
            row.failed += 1
        idempotent = any(t == tool and i for t, _, i in MIX)
        ran = marks / mark
        pids = ran.read_text().split() if ran.exists() else []
        if len(pids) > 1 and not (idempotent and rec is not None and _requeued(rec)):
            row.duplicates += 1
            row.notes.append(f"{mark}: ran {len(pids)} times")
        if rec is None:
            continue
        if rec.status == "running" and (rec.lease_expires or now) < now:
            row.stuck += 1
            row.notes.append(f"{mark}: stuck running ({_summary(rec)})")
        done = marks / f"{mark}.done"
        finishers = {int(p) for p in done.read_text().split()} if done.exists() else set()
        # a handler that returned in a process that lived on: its run must say succeeded
        if finishers - _killed(marks) and rec.status != "succeeded":
            row.misrecorded += 1
            row.notes.append(f"{mark}: finished, recorded {rec.status} ({_summary(rec)})")


def _summary(rec: Any) -> str:
    """What the history says of a run, for a row's notes."""
    if rec is None:
        return "none"
    owner = f"{rec.owner} (host {rec.owner_host}, pid {rec.owner_pid})"
    error = (rec.error or {}).get("message", "")
    return f"{rec.run_id} {rec.status}, owner {owner}, error {error!r}, notes {rec.notes}"


def _requeued(rec: Any) -> bool:
    return any("re-queued" in note for note in rec.notes)


def _killed(marks: Path) -> set[int]:
    path = marks.parent / "killed.json"
    return set(json.loads(path.read_text())) if path.exists() else set()


# ---------------------------------------------------------------- the rows


def scenarios(outage: float) -> dict[str, Fault]:
    """The rows of the table, by name: each an async fault on the fleet."""

    async def replica_kill(fleet: Fleet, cluster: Any) -> None:
        fleet.kill_replica(0)

    async def worker_kill(fleet: Fleet, cluster: Any) -> None:
        await asyncio.sleep(0.5)  # background runs under way on both workers
        fleet.kill_worker(0)

    async def drain(fleet: Fleet, cluster: Any) -> None:
        fleet.drain_replica(1)

    async def pg_fast(fleet: Fleet, cluster: Any) -> None:
        await asyncio.to_thread(restart, cluster, "fast")

    async def pg_immediate(fleet: Fleet, cluster: Any) -> None:
        await asyncio.to_thread(restart, cluster, "immediate")

    async def pg_stopped(fleet: Fleet, cluster: Any) -> None:
        await asyncio.to_thread(stop_for, cluster, outage)

    async def mixed(fleet: Fleet, cluster: Any) -> None:
        fleet.kill_replica(2)
        fleet.kill_worker(1)
        await asyncio.to_thread(restart, cluster, "fast")

    return {
        "replica killed mid-call (SIGKILL)": replica_kill,
        "worker killed mid-run (SIGKILL)": worker_kill,
        "replica drained (SIGTERM), sticky sessions": drain,
        "PostgreSQL restart -m fast under load": pg_fast,
        "PostgreSQL restart -m immediate under load": pg_immediate,
        f"PostgreSQL stopped {outage:g} s": pg_stopped,
        "connection limit (role limited to 12)": _limited,
        "mixed: replica + worker killed, restart -m fast": mixed,
    }


async def _limited(fleet: Fleet, cluster: Any) -> None:
    """Marker only: the limit is applied around the whole row (see :func:`run_row`)."""


CONNECTION_LIMIT = 12


def run_row(
    index: int, name: str, fault: Fault, fleet: Fleet, cluster: pgcluster.Cluster, calls: int
) -> Row:
    """One row: the load with its fault, recovery, the fleet replaced, and the referee. The
    handlers run in the replica (calls) or the worker (background runs) process, so the pids
    killed are those whose finished handlers may go unrecorded."""
    row = Row(name)
    began = time.monotonic()
    prefix = f"row{index}"
    with contextlib.ExitStack() as stack:
        if fault is _limited:
            role = fleet.url.split("//")[1].split(":")[0]
            stack.enter_context(connection_limit(cluster, role, CONNECTION_LIMIT))
        outcomes, row.recovery_s = asyncio.run(load(fleet, prefix, calls, fault, cluster))
    _remember_killed(fleet)
    fleet.revive()
    runs = settle(fleet.url)
    judge(row, outcomes, runs, fleet.root / "marks")
    row.seconds = time.monotonic() - began
    return row


def _remember_killed(fleet: Fleet) -> None:
    path = fleet.root / "killed.json"
    path.write_text(json.dumps(sorted(fleet.killed_pids)))


@contextlib.contextmanager
def running_fleet(cluster: pgcluster.Cluster, tmp: Path) -> Iterator[Fleet]:
    """A project with the fleet's tools, and its replicas and workers on a fresh database."""
    root = make_project(tmp / "proj")
    (root / "handlers.py").write_text(HANDLERS)
    url = fleet_database(cluster, "faults")
    from toolctl.runtime.history.postgres import PostgresStore

    PostgresStore(url).close()  # the tables, before the fleet races to make them
    fleet = Fleet(root, url)
    try:
        fleet.start()
        yield fleet
    finally:
        fleet.close()


def run_table(
    cluster: pgcluster.Cluster, tmp: Path, calls: int, outage: float, only: list[str] | None = None
) -> list[Row]:
    """Every row (or those whose name starts with one of ``only``), on one fleet."""
    rows = []
    with running_fleet(cluster, tmp) as fleet:
        for index, (name, fault) in enumerate(scenarios(outage).items()):
            if only and not any(name.startswith(o) for o in only):
                continue
            rows.append(run_row(index, name, fault, fleet, cluster, calls))
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--calls", type=int, default=40, help="calls per row")
    parser.add_argument("--outage", type=float, default=10.0, help="seconds PostgreSQL is down")
    parser.add_argument("--only", nargs="*", help="rows whose name starts with these")
    parser.add_argument("--verbose", action="store_true", help="print each row's notes")
    args = parser.parse_args()
    with pgcluster.running_cluster() as cluster, tempfile.TemporaryDirectory() as tmp:
        t0 = time.monotonic()
        rows = run_table(cluster, Path(tmp), args.calls, args.outage, args.only)
        print(markdown(rows))
        print(f"\n({args.calls} calls a row, {time.monotonic() - t0:.0f} s in all)")
        print(", ".join(f"{row.name}: {row.seconds:.0f} s" for row in rows))
        if args.verbose:
            for row in rows:
                for note in row.notes:
                    print(f"{row.name}: {note}")


if __name__ == "__main__":
    main()
