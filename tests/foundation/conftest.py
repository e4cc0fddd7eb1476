"""Shared helpers for the foundation tests: registries in temp dirs, running the CLI."""

from __future__ import annotations

import http.server
import ipaddress
import os
import socket
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, ClassVar

import pytest

from toolctl.loader import load_registry
from toolctl.registry import Registry

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _stable_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No colour, fixed width, a throwaway HOME: output is stable and nothing leaks out."""
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "200")
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))


@pytest.fixture(autouse=True)
def _loopback_only(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tripwire: any connection in this process to a non-loopback address fails the test."""
    real_connect = socket.socket.connect

    def connect(self: socket.socket, address: Any) -> None:
        host = address[0] if isinstance(address, tuple) else ""
        if (
            self.family in (socket.AF_INET, socket.AF_INET6)
            and not ipaddress.ip_address(host).is_loopback
        ):
            raise AssertionError(f"network access to {address!r} in a test")
        real_connect(self, address)

    monkeypatch.setattr(socket.socket, "connect", connect)


def write(root: Path, files: dict[str, str]) -> Path:
    """Write ``files`` (relative path → text, dedented) under ``root``; return ``root``."""
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text).lstrip("\n"), encoding="utf-8")
    return root


@pytest.fixture
def registry_of(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Registry]:
    """Write a project (``tools.d/...`` files and modules) and load it without packs."""

    def load(files: dict[str, str]) -> Registry:
        write(tmp_path, files)
        (tmp_path / "tools.d").mkdir(exist_ok=True)
        monkeypatch.chdir(tmp_path)
        return load_registry(tmp_path / "tools.d", packs=False)

    return load


def codes(registry: Registry) -> list[str]:
    """The diagnostic codes of a registry, in order."""
    return [d.code for d in registry.diagnostics]


def run_toolctl(
    *args: str, cwd: Path | None = None, env: dict[str, str] | None = None, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """``python -m toolctl ARGS`` in a fresh process (text output, never raises on exit code)."""
    full_env = {**os.environ, "NO_COLOR": "1", **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "toolctl", *args],
        cwd=cwd,
        env=full_env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


class _Counting(http.server.BaseHTTPRequestHandler):
    hits: ClassVar[list[str]]

    def do_GET(self) -> None:
        type(self).hits.append(self.path)
        body = b'{"type": "string", "maxLength": 1}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: Any) -> None:
        pass


@pytest.fixture
def server() -> Iterator[tuple[str, list[str]]]:
    """A schema server on 127.0.0.1 that records every request: (base URL, hits)."""
    hits: list[str] = []
    handler = type("Handler", (_Counting,), {"hits": hits})
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{httpd.server_address[1]}", hits
    finally:
        httpd.shutdown()
        httpd.server_close()
