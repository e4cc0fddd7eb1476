"""Enqueueing a background run on the PostgreSQL task queue (a throwaway local cluster).

* floor: the compare-and-set of the run row alone (what every enqueue does first);
* ``queue.enqueue``: the row, then the Procrastinate job on the store's own small pool;
* peer: the same job with Procrastinate opened for each enqueue (``with app.open(): defer``,
  the usual sync pattern, which opens a pool of connections every time).

Rounds interleaved; the best round of each. Not a test: it prints numbers and ratios.

    python bench/bench_queue.py [--calls 100] [--rounds 3]
"""

from __future__ import annotations

import argparse
import secrets
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE.parent / "src"))

from bench import pgcluster  # noqa: E402

LOCATOR = {"root": "/srv/project", "tools": []}
FLOOR = "row update only (floor)"
OURS = "queue.enqueue (store's pool)"
PEER = "Procrastinate opened per call"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=100, help="enqueues per round")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from toolctl.runtime.history import queue
    from toolctl.runtime.history.ownership import owner_fields
    from toolctl.runtime.history.postgres import PostgresStore
    from toolctl.runtime.history.records import RunRecord

    with pgcluster.bench_cluster() as cluster:
        store = PostgresStore(cluster.create_database("bench_queue"))
        queue.ensure_schema(store)

        def runs(n: int) -> list[tuple[str, str]]:
            made = []
            for _ in range(n):
                run_id, token = secrets.token_hex(8), secrets.token_hex(8)
                record = RunRecord(
                    run_id=run_id,
                    tool="t",
                    status="running",
                    tool_digest="d",
                    created_at=time.time(),
                    **owner_fields(token),
                )
                store.insert(record)
                made.append((run_id, token))
            return made

        def row_only(run_id: str, token: str) -> Any:
            return store.update(
                run_id, expect_owner=token, durable=True, registry=LOCATOR, **queue._queued()
            )

        peer_app = queue.make_app(store.url)  # made once: only the opening is per call

        def opened_per_call(run_id: str, token: str) -> Any:
            row_only(run_id, token)
            with peer_app.open():
                return peer_app.configure_task(queue.TASK, queue=queue.QUEUE).defer(
                    run_id=run_id, token=token
                )

        def enqueue(run_id: str, token: str) -> Any:
            return queue.enqueue(store, run_id, token, LOCATOR)

        cases: dict[str, Callable[[str, str], Any]] = {
            FLOOR: row_only,
            OURS: enqueue,
            PEER: opened_per_call,
        }
        best = {name: float("inf") for name in cases}
        for _ in range(args.rounds):
            for name, fn in cases.items():
                batch = runs(args.calls)
                started = time.perf_counter()
                for run_id, token in batch:
                    fn(run_id, token)
                per_call = (time.perf_counter() - started) / args.calls * 1e6
                best[name] = min(best[name], per_call)
        store.close()

    floor = best[FLOOR]
    print(f"enqueue, {args.calls} calls x {args.rounds} rounds (best round), local PostgreSQL:")
    print(f"  {'':32s} {'us/enqueue':>10s} {'vs floor':>9s}")
    for name, value in best.items():
        print(f"  {name:32s} {value:10.0f} {value / floor:8.2f}x")
    print(f"  queue.enqueue / opened per call = {best[OURS] / best[PEER]:.3f}x")


if __name__ == "__main__":
    main()
