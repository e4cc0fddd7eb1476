"""``serve --reload --locked`` swaps in only definitions that match toolctl.lock.

Starts a real server process (slow).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest

from tests.server.serve_helpers import SUBTRACT_TOOL, copy_registry, stdio_params, wait_for

pytestmark = pytest.mark.timeout(90)


def _lock(root: Path) -> None:
    subprocess.run(
        [sys.executable, "-m", "toolctl", "lock"], cwd=root, check=True, capture_output=True
    )


def test_reload_with_locked_keeps_unlocked_definitions_out(tmp_path: Path) -> None:  # slow
    pytest.importorskip("mcp")
    from mcp import Client
    from mcp.client.stdio import stdio_client

    root = copy_registry(tmp_path)
    _lock(root)
    log_path = tmp_path / "server.log"
    new_file = root / "tools.d" / "subtract.yaml"

    def log() -> str:
        return log_path.read_text(encoding="utf-8")

    async def main() -> tuple[list[str], list[str], list[str], dict[str, Any]]:
        params = stdio_params(root, "--reload", "--locked", "--log-level", "warning")
        with log_path.open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as c:

                async def names() -> list[str]:
                    return [t.name for t in (await c.list_tools()).tools]

                before = await names()
                new_file.write_text(SUBTRACT_TOOL)
                await wait_for(lambda: "refusing to use it with --locked" in log(), "the refusal")
                refused = await names()
                _lock(root)  # the change is reviewed and locked ...
                stat = new_file.stat()  # ... and the next edit of the files reloads it
                os.utime(new_file, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10**9))
                await wait_for(lambda: "(+subtract)" in log(), "the reload")
                tools = (await c.list_tools()).tools
                meta = {t.name: (t.meta or {}) for t in tools}
                return before, refused, [t.name for t in tools], meta

    before, refused, after, meta = anyio.run(main)
    assert "subtract" not in before
    assert refused == before
    assert "TD103" in log() and "new tool subtract" in log()
    assert after == sorted([*before, "subtract"])
    import json

    locked = json.loads((root / "toolctl.lock").read_text())["tools"]
    assert meta["subtract"]["dev.toolctl/contractDigest"] == locked["subtract"]["contractDigest"]
