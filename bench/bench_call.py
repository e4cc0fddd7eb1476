"""In-process call overhead: ``registry.call`` against the floor of doing the same steps by hand.

Floor: validate input, call the handler, validate output — with the same cached validator the
pipeline uses (``toolctl.schema.cached_validator``). Budget (issue 3): ``registry.call`` with the
history off costs at most 1.5 × floor + 20 µs. Also prints the per-call cost of recording the run
in the SQLite history. Not a test: it prints numbers and ratios.

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
    from toolctl.runtime.store import SqliteStore
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
    # read-only is recorded with one write when it ends, any other with two (each timed call
    # includes a run_until_complete, so compare the two rows with each other).
    loop = asyncio.new_event_loop()

    def acall_on() -> object:
        return loop.run_until_complete(registry.acall("bench", value, store=store))

    def acall_ro() -> object:
        return loop.run_until_complete(registry.acall("bench_ro", value, store=store))

    assert registry.call("bench", value, store=False).ok
    n, r = args.calls, args.repeat
    few = max(50, n // 20)
    us = measure(
        {
            "floor": floor,
            "off": call_off,
            "on": call_on,
            "full": call_full,
            "acall": acall_on,
            "acall_ro": acall_ro,
        },
        {"floor": n, "off": n, "on": few, "full": few, "acall": few, "acall_ro": few},
        r,
    )
    loop.close()
    floor_us, off_us, on_us = us["floor"], us["off"], us["on"]
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
        f"registry.call, SQLite history on:            {on_us:8.2f} us/call"
        f"   recording costs {on_us - off_us:8.2f} us/call "
        "(WAL, synchronous=NORMAL, 2 commits per run)"
    )
    print(
        f"  same with synchronous=FULL (comparison):   {us['full']:8.2f} us/call"
        f"   recording costs {us['full'] - off_us:8.2f} us/call"
    )
    print(
        f"registry.acall, history on (2 writes):        {us['acall']:8.2f} us/call"
        f"   read-only tool (1 write): {us['acall_ro']:8.2f} us/call, "
        f"ratio {us['acall_ro'] / us['acall']:4.2f}x"
    )


if __name__ == "__main__":
    main()
