"""The load balancer example (docs/deploy/haproxy.cfg, issue 21 D4) run for real: HAProxy in
front of two ``toolctl serve`` replicas on one PostgreSQL, one of them drained with SIGTERM
while a 2025-11-25 session on it has a call in flight."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from bench import pgcluster

from tests.store.fleet import make_project, replica
from tests.store.test_deploy_docs import DEPLOY

pytestmark = [pytest.mark.requires("haproxy"), pytest.mark.slow]
pytest.importorskip("mcp")


def test_the_shipped_config_is_valid() -> None:
    done = subprocess.run(
        ["haproxy", "-c", "-f", str(DEPLOY / "haproxy.cfg")],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Configuration file is valid" in done.stdout + done.stderr


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def haproxy(tmp: Path, replicas: list[str]) -> Iterator[str]:
    """The shipped config with the replicas' addresses and a loopback port; its MCP URL."""
    conf = (DEPLOY / "haproxy.cfg").read_text()
    port = _free_port()
    conf = conf.replace("bind :8080", f"bind 127.0.0.1:{port}")
    for name, url in zip(("replica1", "replica2"), replicas, strict=True):
        conf = conf.replace(f"{name}:8000", url.split("//")[1].split("/")[0])
    path = tmp / "haproxy.cfg"
    path.write_text(conf)
    proc = subprocess.Popen(
        ["haproxy", "-db", "-f", str(path)],
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 1):
                break
            time.sleep(0.1)
        time.sleep(2.5)  # two health checks (rise 2) pass on both replicas
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _pid_of(project: Path, mark: str) -> int:
    """The process that ran the handler of call ``mark`` (in-process handlers: the replica)."""
    return int((project / "marks" / mark).read_text().split()[0])


async def _modern_call(url: str, mark: str) -> Any:
    from mcp.client import Client

    async with Client(url) as client:
        return await client.call_tool("quick", {"id": mark})


def test_a_draining_replica_behind_haproxy(tmp_path: Path, pg: pgcluster.Cluster) -> None:
    from mcp.client import Client

    project = make_project(tmp_path / "proj")
    url = pg.create_database("balancer")
    args = ("--allowed-host", "mcp.example.com", "--shutdown-timeout", "20")
    with (
        replica(project, url, *args) as one,
        replica(project, url, *args) as two,
        haproxy(tmp_path, [one.url, two.url]) as front,
    ):
        by_pid = {one.proc.pid: one, two.proc.pid: two}

        async def scenario() -> dict[str, Any]:
            seen: dict[str, Any] = {}
            async with Client(front, mode="legacy") as session:
                first = await session.call_tool("quick", {"id": "s1"})
                assert first.is_error is False
                home = by_pid[_pid_of(project, "s1")]  # the replica the session sticks to
                seen["home"] = home
                slow = asyncio.create_task(session.call_tool("quick", {"id": "s2", "seconds": 2}))
                while not (project / "marks" / "s2").exists():
                    await asyncio.sleep(0.05)
                home.proc.send_signal(signal.SIGTERM)  # drain, with s2 in flight
                await asyncio.sleep(0.5)
                seen["in_flight"] = await slow
                try:
                    refused = await session.call_tool("quick", {"id": "s3"})
                    seen["refused"] = "error" if refused.is_error else "answered"
                except Exception as exc:  # the 503 reaches the client as an error
                    seen["refused"] = type(exc).__name__
            seen["modern"] = await _modern_call(front, "m1")
            async with Client(front, mode="legacy") as fresh:
                seen["new_session"] = await fresh.call_tool("quick", {"id": "n1"})
            return seen

        seen = asyncio.run(scenario())
        home = seen["home"]
        assert home.proc.wait(30) == 0  # drained and stopped cleanly
    assert seen["in_flight"].is_error is False  # the call in flight finished
    assert seen["refused"] != "answered"  # a new call in the draining session: refused visibly
    assert not (project / "marks" / "s3").exists()  # and it never ran
    assert seen["modern"].is_error is False and seen["new_session"].is_error is False
    assert _pid_of(project, "m1") != home.proc.pid  # both went to the other replica
    assert _pid_of(project, "n1") != home.proc.pid
    assert (project / "marks" / "s2").read_text().count("\n") == 1
