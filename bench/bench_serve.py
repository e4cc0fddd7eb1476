"""tools/call and tools/list latency of ``toolctl serve`` over stdio, against the SDK's servers.

Prints, in one run: tools/call p50/p90/p99 for a trivial tool served by ``toolctl serve``, by the
SDK's high-level ``MCPServer`` and by a bare low-level SDK ``Server`` (the floor), for each
protocol revision (2025-11-25 with the initialize handshake, 2026-07-28 with per-request
envelopes), then tools/list with 1,000 tools. Budgets, per revision: toolctl within 1.3x the
floor at p50 and at p99, faster than MCPServer at p50; list under 100 ms.

    .venv/bin/python bench/bench_serve.py [--calls 1000] [--lists 20]

Every server is a real subprocess spoken to by the SDK's own client.
"""

from __future__ import annotations

import argparse
import logging
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from serve_common import (
    LOWLEVEL_STDIO,
    LOWLEVEL_TOOL,
    MCPSERVER_STDIO,
    MCPSERVER_TOOL,
    p,
    registry,
    script,
)
from stdio_probe import INIT, INITIALIZED, RawServe

# toolctl's server and pipeline on the SDK's own (threaded) stdio transport, as the floor uses:
# separates what toolctl's transport saves from what its pipeline and history cost.
SDK_TRANSPORT = """
import anyio, toolctl
from mcp.server.runner import serve_dual_era_loop
from mcp.server.stdio import stdio_server
from toolctl.server.app import ToolServer
from toolctl.server.toolset import build_toolset

server = ToolServer(build_toolset(toolctl.load()))

async def main():
    low = server.lowlevel
    async with stdio_server() as (read, write), low.lifespan(low) as state:
        await serve_dual_era_loop(
            low, read, write, lifespan_state=state, init_options=server.init_options()
        )

anyio.run(main)
"""


async def measure_calls(
    servers: dict[str, Any], calls: int, mode: str = "legacy"
) -> dict[str, list[float]]:
    """Sequential tools/call latency per server, interleaved call by call (the order rotating)
    so that noise from the rest of the machine falls on every server alike: a p99 is the few
    slowest calls, and a burst of noise that hit one server's block of calls would decide it.
    ``mode``: the client's protocol choice (``legacy``: 2025-11-25; ``2026-07-28``)."""
    async with AsyncExitStack() as stack:
        clients = [
            (label, await stack.enter_async_context(Client(server, mode=mode)))
            for label, server in servers.items()
        ]
        for _, client in clients:
            for _ in range(20):  # warm up: imports, validators, the run store
                await client.call_tool("add", {"a": 1, "b": 2})
        times: dict[str, list[float]] = {label: [] for label, _ in clients}
        for i in range(calls):
            turn = i % len(clients)
            for label, client in clients[turn:] + clients[:turn]:
                start = time.perf_counter()
                result = await client.call_tool("add", {"a": i, "b": 2})
                times[label].append(time.perf_counter() - start)
                assert not result.is_error, result
    return times


async def measure_lists(params: StdioServerParameters, lists: int) -> tuple[int, list[float]]:
    async with Client(params, mode="legacy", cache=None) as client:
        count = len((await client.list_tools()).tools)
        times = []
        for _ in range(lists):
            start = time.perf_counter()
            await client.list_tools()
            times.append(time.perf_counter() - start)
    return count, times


def measure_raw_lists(root: Path, lists: int) -> list[float]:
    """tools/list round trips on the bare stdio pipe: the server's cost without a client SDK."""
    server = RawServe(root, stderr=subprocess.DEVNULL)
    server.rpc(INIT)
    server.rpc(INITIALIZED)
    times = []
    for i in range(lists + 2):
        start = time.perf_counter()
        reply = server.rpc({"jsonrpc": "2.0", "id": i + 2, "method": "tools/list"})
        times.append(time.perf_counter() - start)
        assert len(reply["result"]["tools"]) == 1000
    server.close()
    return times[2:]


class NoHistory:
    """A registry whose calls skip the run history (to isolate the MCP layer's own cost)."""

    def __init__(self, registry: Any) -> None:
        self._registry = registry

    def __getattr__(self, name: str) -> Any:
        return getattr(self._registry, name)

    async def acall(self, name: str, input: Any = None, **options: Any) -> Any:
        return await self._registry.acall(name, input, store=False, **options)


async def measure_inprocess(root: Path, effects: Path, calls: int) -> dict[str, list[float]]:
    """The same call in one process over the SDK's memory transport (no pipes): the floor
    server, toolctl's server with the run history off and on (the tool declared read-only: one
    write per call; ``effects``' tool is not: two), and ``registry.acall`` alone, history off."""
    import toolctl
    from toolctl.server.app import ToolServer
    from toolctl.server.toolset import build_toolset

    namespace: dict[str, Any] = {}
    exec(LOWLEVEL_TOOL, namespace)  # the floor server, not run
    peer: dict[str, Any] = {}
    exec(MCPSERVER_TOOL, peer)  # the SDK's high-level server, not run
    root_log = logging.getLogger()  # MCPServer set up INFO logging on a rich console: undo it,
    for handler in root_log.handlers[:]:  # or every call's log line is timed too
        root_log.removeHandler(handler)
    root_log.setLevel(logging.WARNING)
    registry = NoHistory(toolctl.load(root / "tools.d"))
    ours = ToolServer(build_toolset(registry))  # type: ignore[arg-type]
    recorded = ToolServer(build_toolset(toolctl.load_project(root)))
    recorded_effects = ToolServer(build_toolset(toolctl.load_project(effects)))
    times = await measure_calls(
        {
            "lowlevel (floor)": namespace["server"],
            "MCPServer": peer["server"],
            "toolctl": ours.lowlevel,
            "  history on": recorded.lowlevel,
            "  on, not read-only": recorded_effects.lowlevel,
        },
        calls,
    )
    times["registry.acall"] = []
    for _ in range(20):
        await registry.acall("add", {"a": 1, "b": 2})
    for i in range(calls):
        start = time.perf_counter()
        await registry.acall("add", {"a": i, "b": 2})
        times["registry.acall"].append(time.perf_counter() - start)
    return times


def history_cost(inproc: dict[str, tuple[float, float]]) -> None:
    """Print what the run history adds to a call of toolctl's server (p50, on - off) against
    half the 280 us it added in issue 16."""
    off = inproc["toolctl"][0]
    costs = {
        "read-only tool (1 write)": inproc["  history on"][0] - off,
        "not read-only (2 writes)": inproc["  on, not read-only"][0] - off,
    }
    shown = ", ".join(f"{label} {cost * 1e6:.0f} us" for label, cost in costs.items())
    worst = max(costs.values())
    print(
        f"  run history in toolctl's server (p50, on - off): {shown} "
        f"(budget <= 140 us) {'OK' if worst <= 140e-6 else 'OVER'}"
    )


def table(times: dict[str, list[float]]) -> dict[str, tuple[float, float]]:
    """Print p50/p90/p99 and calls/s per row; return each row's (p50, p99)."""
    print(f"  {'server':<20} {'p50 us':>8} {'p90 us':>8} {'p99 us':>8} {'calls/s':>8}")
    for label, values in times.items():
        print(
            f"  {label:<20} {statistics.median(values) * 1e6:8.0f} {p(values, 0.9) * 1e6:8.0f} "
            f"{p(values, 0.99) * 1e6:8.0f} {len(values) / sum(values):8.0f}"
        )
    return {label: (statistics.median(values), p(values, 0.99)) for label, values in times.items()}


def budgets(stats: dict[str, tuple[float, float]]) -> None:
    """Print toolctl's ratios to the floor and to MCPServer, with their budgets."""
    (floor, floor99), (high, _) = stats["lowlevel (floor)"], stats["MCPServer"]
    ours, ours99 = stats["toolctl serve"]
    print(
        f"  toolctl / floor     = {ours / floor:.2f}x p50 (budget <= 1.30x) "
        f"{'OK' if ours <= 1.3 * floor else 'OVER'}"
    )
    print(
        f"  toolctl / floor     = {ours99 / floor99:.2f}x p99 (budget <= 1.30x) "
        f"{'OK' if ours99 <= 1.3 * floor99 else 'OVER'}"
    )
    print(
        f"  toolctl / MCPServer = {ours / high:.2f}x p50 (budget < 1.00x) "
        f"{'OK' if ours < high else 'OVER'}"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--lists", type=int, default=20)
    args = parser.parse_args()
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        small = registry(root / "one", 1)
        large = registry(root / "thousand", 1000)
        serve = ["-m", "toolctl", "serve"]
        servers: dict[str, Any] = {
            "lowlevel (floor)": StdioServerParameters(
                command=py, args=[str(script(root, "lowlevel.py", LOWLEVEL_STDIO))]
            ),
            "MCPServer": StdioServerParameters(
                command=py, args=[str(script(root, "mcpserver.py", MCPSERVER_STDIO))]
            ),
            "toolctl serve": StdioServerParameters(command=py, args=serve, cwd=str(small)),
        }
        sdk_transport = script(root, "sdk_transport.py", SDK_TRANSPORT)
        servers["  on the SDK's stdio"] = StdioServerParameters(
            command=py, args=[str(sdk_transport)], cwd=str(small)
        )
        # A tool not declared read-only gets its running row before the handler starts.
        effects = registry(root / "effects", 1, read_only=False)
        servers["  not read-only"] = StdioServerParameters(command=py, args=serve, cwd=str(effects))
        tmpfs = Path(tempfile.mkdtemp(dir="/dev/shm")) if Path("/dev/shm").is_dir() else None
        if tmpfs is not None:  # the run history on tmpfs: the same work without disk fsyncs
            on_tmpfs = registry(root / "tmpfs", 1, state=str(tmpfs / "state.db"))
            servers["  history on tmpfs"] = StdioServerParameters(
                command=py, args=serve, cwd=str(on_tmpfs)
            )
        for revision, mode in (("2025-11-25", "legacy"), ("2026-07-28", "2026-07-28")):
            print(
                f"tools/call over stdio, protocol {revision}, {args.calls} sequential calls "
                "per server (interleaved)"
            )
            budgets(table(anyio.run(measure_calls, servers, args.calls, mode)))
            # The variants isolate costs once; the newer revision compares the three servers.
            servers = {k: v for k, v in servers.items() if not k.startswith(" ")}
        print("the same call in-process (SDK memory transport; run history off unless said):")
        inproc = table(anyio.run(measure_inprocess, small, effects, args.calls))
        history_cost(inproc)
        layer = inproc["toolctl"][0] - inproc["lowlevel (floor)"][0] - inproc["registry.acall"][0]
        print(
            f"  toolctl's MCP layer = toolctl - floor - registry.acall = {layer * 1e6:.0f} us; "
            f"the rest of the stdio gap is the runtime's (pipeline and run history)"
        )
        # Like for like: MCPServer keeps no run history; toolctl's server here keeps none either.
        same = inproc["toolctl"][0] / inproc["MCPServer"][0]
        print(
            f"  toolctl / MCPServer, both without a run history = {same:.2f}x p50 "
            f"(budget < 1.00x) {'OK' if same < 1.0 else 'OVER'}"
        )
        if tmpfs is not None:
            shutil.rmtree(tmpfs, ignore_errors=True)
        params = StdioServerParameters(command=py, args=["-m", "toolctl", "serve"], cwd=str(large))
        count, times = anyio.run(measure_lists, params, args.lists)
        raw = measure_raw_lists(large, args.lists)
        median, raw_median = statistics.median(times), statistics.median(raw)
        print(f"tools/list with {count} tools over stdio (budget < 100 ms):")
        print(
            f"  raw JSON-RPC pipe (server + transport): median {raw_median * 1e3:.1f} ms, "
            f"max {max(raw) * 1e3:.1f} ms {'OK' if raw_median < 0.1 else 'OVER'}"
        )
        print(
            f"  SDK Client.list_tools (adds client-side validation): median "
            f"{median * 1e3:.1f} ms, max {max(times) * 1e3:.1f} ms "
            f"{'OK' if median < 0.1 else 'OVER'}"
        )


if __name__ == "__main__":
    main()
