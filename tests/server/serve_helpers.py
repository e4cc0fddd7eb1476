"""Helpers for the MCP server tests: the test registry and real server processes."""

from __future__ import annotations

import contextlib
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

from bench.stdio_probe import INIT, INITIALIZED, RawServe, wire

__all__ = ["INIT", "INITIALIZED", "RawServe", "wire"]

REGISTRY = Path(__file__).parent / "registry"


# A tool file a reload test adds to the registry while the server runs.
SUBTRACT_TOOL = """toolctl: 1
name: subtract
description: Subtract b from a.
handler: servetools:add
inputSchema:
  type: object
  properties: {a: {type: integer}, b: {type: integer}}
"""


async def wait_for(predicate: Callable[[], object], what: str) -> None:
    """Wait (up to 20 s) until ``predicate()`` holds; the failure names ``what`` was awaited."""
    import anyio

    try:
        with anyio.fail_after(20):
            while not predicate():
                await anyio.sleep(0.05)
    except TimeoutError:
        raise AssertionError(f"waited 20 s for {what}") from None


def shout_call(text: str) -> dict[str, Any]:
    """The ``tools/call`` request (id 2) of the registry's ``shout`` tool."""
    return {
        "jsonrpc": "2.0",
        "id": 2,
        "method": "tools/call",
        "params": {"name": "shout", "arguments": {"text": text}},
    }


def run_serve(
    registry: Path, *args: str, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """``toolctl serve ARGS`` run to its end (for options it refuses); ``env`` is added to
    this process's environment."""
    return subprocess.run(
        [sys.executable, "-m", "toolctl", "serve", *args],
        cwd=registry,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=120,  # a hang guard; a loaded machine takes more than 30 s to start a server
        stdin=subprocess.DEVNULL,
    )


def copy_registry(tmp_path: Path) -> Path:
    """A private copy of the test registry (its run history and edits stay in tmp)."""
    target = tmp_path / "registry"
    shutil.copytree(REGISTRY, target, ignore=shutil.ignore_patterns(".toolctl", "__pycache__"))
    return target


def stdio_params(registry: Path, *args: str):  # type: ignore[no-untyped-def]
    """How the SDK client starts ``python -m toolctl serve`` as a stdio subprocess."""
    from mcp.client.stdio import StdioServerParameters

    env = {
        k: v
        for k, v in os.environ.items()
        if k in ("PATH", "HOME", "LANG", "SYSTEMROOT", "TOOLCTL_CACHE_DIR")
    }
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "toolctl", "serve", *args],
        cwd=str(registry),
        env=env,
    )


class HttpServer:
    """A ``toolctl serve --transport http`` subprocess and its stderr (the server log)."""

    def __init__(self, proc: subprocess.Popen[str], url: str) -> None:
        self.proc = proc
        self.url = url
        self.port = int(url.rsplit(":", 1)[1].split("/", 1)[0])
        self.log: list[str] = []
        self._reader = threading.Thread(target=self._drain, daemon=True)
        self._reader.start()

    def _drain(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)


@contextlib.contextmanager
def http_server(
    registry: Path, *args: str, env: dict[str, str] | None = None
) -> Iterator[HttpServer]:
    """Start the server on a free loopback port; yield once it listens."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "toolctl", "serve", "--transport", "http", "--port", "0", *args],
        cwd=registry,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, **(env or {})},
    )
    server: HttpServer | None = None
    try:
        assert proc.stderr is not None
        seen = []
        for line in proc.stderr:
            seen.append(line)
            if " on http://" in line:
                url = line.rsplit(" on ", 1)[1].strip()
                break
        else:
            raise AssertionError("server did not start:\n" + "".join(seen))
        server = HttpServer(proc, url)
        yield server
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if server is not None:
            server._reader.join(5)
        if proc.stderr is not None:
            proc.stderr.close()


Body = Callable[[Any], Awaitable[Any]]
Elicit = Callable[[Any, Any], Awaitable[Any]]


class Served:
    """One ``toolctl serve`` stdio subprocess and its SDK client, kept for a module's tests on
    an event loop in a thread of its own (a server start costs about 2.5 s of CPU, most of it
    the MCP SDK's import). ``elicit``: whether the client declares elicitation (each call then
    says how it answers); ``mode``: the client's protocol choice."""

    def __init__(self, registry: Path, *, elicit: bool, mode: str = "auto") -> None:
        self.registry = registry
        self._elicit, self._mode = elicit, mode
        self._answer: Elicit | None = None

    async def _dispatch(self, context: Any, params: Any) -> Any:
        assert self._answer is not None, "the server asked a question no test expected"
        return await self._answer(context, params)

    @contextlib.contextmanager
    def running(self) -> Iterator[Served]:
        from anyio.from_thread import start_blocking_portal
        from mcp import Client

        options: dict[str, Any] = {"elicitation_callback": self._dispatch} if self._elicit else {}
        with start_blocking_portal() as portal:
            client = Client(stdio_params(self.registry), mode=self._mode, **options)
            with portal.wrap_async_context_manager(client) as entered:
                self._portal, self._client = portal, entered
                yield self

    def run(self, body: Body, answer: Elicit | None = None) -> Any:
        """``body(client)`` on the shared connection, elicitations answered by ``answer``."""
        self._answer = answer
        try:
            return self._portal.call(body, self._client)
        finally:
            self._answer = None

    def statuses(self, tool: str) -> list[str]:
        """The statuses of ``tool``'s recorded runs, oldest first."""
        from toolctl.runtime.history.sqlite import open_store

        runs = open_store(self.registry / ".toolctl" / "state.db").query(tool=tool)
        return [r.status for r in sorted(runs, key=lambda r: r.created_at)]
