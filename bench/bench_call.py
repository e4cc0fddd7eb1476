"""In-process call overhead: ``registry.call`` against the floor of doing the same steps by hand.

Floor: validate input, call the handler, validate output — with the same cached validator the
pipeline uses (``toolctl.schema.cached_validator``). Budget (issue 3): ``registry.call`` with the
history off costs at most 1.5 × floor + 20 µs. Also prints the per-call cost of recording the run
in the SQLite history (history on minus history off) for the sync and async front ends, alone and
with other calls in flight, for tools declared read-only and not, against the issue's 280 µs
baseline (budget issue 16: at most half of it in every row). Not a test: it prints numbers and
ratios.

    python bench/bench_call.py [--calls 2000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

TOOL = """\
toolctl: 1
name: {name}
description: Benchmark tool.
{annotations}handler: bench_handler:run
inputSchema:
  type: object
  properties:
    x: {type: integer, minimum: 0}
    y: {type: string, maxLength: 100}
  required: [x, y]
  additionalProperties: false
outputSchema:
  type: object
  properties:
    result: {type: string}
    count: {type: integer, minimum: 0}
  required: [result, count]
  additionalProperties: false
"""

HANDLER = """\
def run(args):
    return {"result": args["y"], "count": args["x"]}
"""


def tool_file(name: str, annotations: str) -> str:
    return TOOL.replace("{name}", name).replace("{annotations}", annotations)


def measure(
    fns: dict[str, Callable[[], object]], calls: dict[str, int], repeat: int
) -> dict[str, float]:
    """Per-call microseconds of each function: rounds interleaved (so machine noise hits all
    of them alike), best round kept (the least disturbed one)."""
    for name, fn in fns.items():
        for _ in range(min(calls[name], 200)):
            fn()
    best = {name: float("inf") for name in fns}
    for _ in range(repeat):
        for name, fn in fns.items():
            n = calls[name]
            start = time.perf_counter()
            for _ in range(n):
                fn()
            best[name] = min(best[name], (time.perf_counter() - start) / n * 1e6)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args()

    root = Path(tempfile.mkdtemp(prefix="toolctl-bench-"))
    (root / "tools.d").mkdir()
    (root / "tools.d" / "bench.yaml").write_text(tool_file("bench", ""))
    read_only = "mcp: {annotations: {readOnlyHint: true}}\n"
    (root / "tools.d" / "bench_ro.yaml").write_text(tool_file("bench_ro", read_only))
    (root / "bench_handler.py").write_text(HANDLER)
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: ['.']\n")
    os.chdir(root)
    sys.path.insert(0, str(root))

    import toolctl
    from toolctl.runtime.history.sqlite import SqliteStore
    from toolctl.schema import cached_validator

    registry = toolctl.load()
    spec = registry.get("bench")
    import bench_handler

    handler = bench_handler.run
    v_in = cached_validator(spec.input_schema)
    v_out = cached_validator(spec.output_schema)
    value = {"x": 7, "y": "hello"}

    def floor() -> object:
        if v_in.errors(value):
            raise AssertionError
        out = handler(value)
        if v_out.errors(out):
            raise AssertionError
        return out

    def call_off() -> object:
        return registry.call("bench", value, store=False)

    store = SqliteStore(root / "state.db")

    def call_on() -> object:
        return registry.call("bench", value, store=store)

    # For comparison only: an fsync on every commit (synchronous=FULL, the store's setting
    # before it kept FULL for the pending transitions only).
    full = SqliteStore(root / "full.db")
    full._db.execute("PRAGMA synchronous = FULL")

    def call_full() -> object:
        return registry.call("bench", value, store=full)

    # The async path (what toolctl serve uses): the handler on a pool worker; a tool declared
    # read-only is recorded with one write when it ends, any other with two. Alone, a call
    # writes in place; with other calls in flight (``CONCURRENT`` at once, per call below) its
    # writes go to the history writer thread, which commits what is pending together.
    loop = asyncio.new_event_loop()

    def acall(name: str, to: object) -> Callable[[], object]:
        return lambda: loop.run_until_complete(registry.acall(name, value, store=to))

    def gather(name: str, to: object) -> Callable[[], object]:
        async def burst() -> object:
            return await asyncio.gather(
                *(registry.acall(name, value, store=to) for _ in range(CONCURRENT))
            )

        return lambda: loop.run_until_complete(burst())

    assert registry.call("bench", value, store=False).ok
    n, r = args.calls, args.repeat
    few = max(50, n // 4)  # the history rows: enough calls per round for a stable best
    fns: dict[str, Callable[[], object]] = {
        "floor": floor,
        "off": call_off,
        "on": call_on,
        "ro": lambda: registry.call("bench_ro", value, store=store),
        "full": call_full,
        "acall off": acall("bench", False),
        "acall": acall("bench", store),
        "acall ro": acall("bench_ro", store),
        "gather off": gather("bench", False),
        "gather": gather("bench", store),
        "gather ro": gather("bench_ro", store),
    }
    calls = {name: n if name in ("floor", "off") else few for name in fns}
    us = measure(fns, calls, r)
    for name in ("gather off", "gather", "gather ro"):
        us[name] /= CONCURRENT
    loop.close()
    report(us, n, r)


CONCURRENT = 8
BASELINE_US = 280.0  # issue 16: what the SQLite history added to a call (two commits)


def report(us: dict[str, float], n: int, r: int) -> None:
    floor_us, off_us = us["floor"], us["off"]
    budget = 1.5 * floor_us + 20.0
    print(f"python {sys.version.split()[0]}, {n} calls x {r} rounds (best of interleaved rounds)")
    print(f"floor (validate in + call + validate out):  {floor_us:8.2f} us/call")
    print(
        f"registry.call, history off:                  {off_us:8.2f} us/call"
        f"   ratio {off_us / floor_us:4.2f}x floor, overhead {off_us - floor_us:6.2f} us"
    )
    print(
        f"budget 1.5 x floor + 20 us:                  {budget:8.2f} us/call"
        f"   {'within budget' if off_us <= budget else 'OVER BUDGET'}"
    )
    print(
        "per-call cost of the SQLite history (WAL, synchronous=NORMAL) = history on - history off;"
    )
    print("writes per run: 2 = running row + final row, 1 = final row only (read-only tool)")
    rows = (
        ("registry.call", "on", "off", 2),
        ("registry.call, read-only tool", "ro", "off", 1),
        ("registry.acall alone", "acall", "acall off", 2),
        ("registry.acall alone, read-only", "acall ro", "acall off", 1),
        (f"registry.acall, {CONCURRENT} in flight", "gather", "gather off", 2),
        (f"registry.acall, {CONCURRENT} in flight, read-only", "gather ro", "gather off", 1),
    )
    worst = 0.0
    for label, on, off, writes in rows:
        cost = us[on] - us[off]
        worst = max(worst, cost)
        print(
            f"  {label + ':':<42} {us[on]:8.2f} us/call   history costs {cost:7.2f} us "
            f"({cost / BASELINE_US:4.2f}x the {BASELINE_US:.0f} us baseline, {writes} write"
            f"{'s' if writes > 1 else ''})"
        )
    half = BASELINE_US / 2
    verdict = "within budget" if worst <= half else "OVER BUDGET"
    print(
        f"budget: history cost <= {half:.0f} us/call (half the issue's {BASELINE_US:.0f} us) "
        f"in every row: worst {worst:.2f} us   {verdict}"
    )
    print(
        f"  registry.call with synchronous=FULL (comparison): {us['full']:8.2f} us/call   "
        f"history costs {us['full'] - off_us:8.2f} us"
    )


if __name__ == "__main__":
    main()
