"""A project of quick, approval and background tools whose handlers leave a marker per
execution, and ``toolctl serve`` replicas of it on a PostgreSQL history."""

from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from bench import pgcluster

from tests.server.serve_helpers import HttpServer
from tests.store.procs import env, kill

HANDLERS = textwrap.dedent("""
    import os, time

    def _mark(input):
        with open(os.path.join(os.environ["MARKS"], input["id"]), "a") as fh:
            fh.write(f"{os.getpid()}\\n")

    def work(input):
        _mark(input)
        time.sleep(input.get("seconds", 0))
        return {"id": input["id"]}
""")


def _tool(name: str, description: str, extra: str = "") -> str:
    return (
        f"  - name: {name}\n    description: {description}\n    handler: handlers:work\n{extra}"
        "    inputSchema:\n      type: object\n"
        "      properties: {id: {type: string}, seconds: {type: number}}\n      required: [id]\n"
    )


TOOLS = "toolctl: 1\ntools:\n" + "".join(
    [
        _tool("quick", "Answer at once."),
        _tool("guarded", "Needs the user's approval.", "    requireApproval: true\n"),
        _tool("chore", "Runs on a worker.", "    background: true\n"),
        _tool(
            "redo",
            "Runs on a worker; safe to run again.",
            "    background: true\n    mcp:\n      annotations: {idempotentHint: true}\n",
        ),
    ]
)


def make_project(root: Path) -> Path:
    """A project at ``root`` with the tools above and a ``marks`` folder for their markers."""
    (root / "tools.d").mkdir(parents=True)
    (root / "marks").mkdir()
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [.]\n")
    (root / "handlers.py").write_text(HANDLERS)
    (root / "tools.d" / "tools.yaml").write_text(TOOLS)
    return root


@contextlib.contextmanager
def replica(
    root: Path, url: str, *args: str, environ: dict[str, str] | None = None
) -> Iterator[HttpServer]:
    """A ``toolctl serve --transport http`` replica on state ``url`` (``environ``: more
    environment variables), in its own process group, killed at the end of the block."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolctl", "serve", "--transport", "http", "--port", "0", *args],
        cwd=root,
        env={**env(root, url), **(environ or {})},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stderr is not None
    seen = []
    for line in proc.stderr:
        seen.append(line)
        if " on http://" in line:
            break
    else:
        proc.wait()
        raise AssertionError("replica did not start:\n" + "".join(seen))
    server = HttpServer(proc, line.rsplit(" on ", 1)[1].strip())
    try:
        yield server
    finally:
        kill(proc)
        server._reader.join(5)
        proc.stderr.close()
        assert pgcluster.PASSWORD not in "".join([*seen, *server.log])


async def call_tool(url: str, tool: str, args: dict[str, Any]) -> dict[str, Any]:
    """Call ``tool`` on the MCP server at ``url`` (approvals accepted); whether it failed, its
    run id and status."""
    from mcp.client import Client

    async def accept(context: Any, params: Any) -> Any:
        import mcp_types as types

        return types.ElicitResult(action="accept", content={})

    async with Client(url, mode="legacy", elicitation_callback=accept) as client:
        result = await client.call_tool(tool, args)
    meta = (result.meta or {}).get("dev.toolctl/run", {})
    return {"is_error": result.is_error, "run": meta.get("id"), "status": meta.get("status")}
