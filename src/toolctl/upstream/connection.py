"""A minimal MCP client for upstream servers: JSON-RPC over stdio or Streamable HTTP.

toolctl's core talks to an upstream through this module, not through the ``mcp`` SDK (which
only ``toolctl.server`` imports): the upstream is untrusted input, and every read here is
bounded in size and time. A connection is thread-safe and not tied to an event loop (the
synchronous API runs a private loop per thread; the server has its own): requests are matched
to answers by id on a reader thread, and async callers await a ``concurrent.futures.Future``.
"""

from __future__ import annotations

import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
from collections.abc import Callable, Mapping
from concurrent.futures import Future
from typing import Any, Protocol

from toolctl.errors import UsageError

PROTOCOL_VERSION = "2025-06-18"
MAX_MESSAGE_BYTES = 8 * 1024 * 1024  # one JSON-RPC message from an upstream
STDERR_TAIL = 4096
# what a stdio upstream inherits from toolctl's environment (the MCP SDKs' default list);
# anything else it needs is named in the tool's upstream.env or secrets
INHERITED_ENV = ("HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "TMPDIR")


class UpstreamError(UsageError):
    """The upstream could not be reached, broke the protocol, timed out or crashed."""


class Connection(Protocol):
    """One upstream connection: send a request (its future answer) or a notification."""

    def request(self, message: dict[str, Any]) -> Future[dict[str, Any]]:
        """Send ``message`` (with an ``id``); the future gets the raw answer message."""

    def notify(self, message: dict[str, Any]) -> None:
        """Send a notification (no answer)."""

    def close(self) -> None:
        """End the connection (and the upstream process it started)."""

    @property
    def alive(self) -> bool:
        """False once the connection has ended (the process exited, ...)."""


class StdioConnection:
    """An upstream started as a process; newline-delimited JSON-RPC on its stdin/stdout."""

    def __init__(
        self,
        command: str,
        args: list[str],
        env: Mapping[str, str],
        on_notice: Callable[[dict[str, Any]], None] | None = None,
    ) -> None:
        base = {k: v for k, v in os.environ.items() if k in INHERITED_ENV}
        try:
            self.proc = subprocess.Popen(
                [command, *args],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                env={**base, **env},
                start_new_session=sys.platform != "win32",  # its whole group is ended on close
            )
        except OSError as exc:
            raise UpstreamError(
                f"cannot start the upstream {command!r}: {exc.strerror or exc}",
                hint="check upstream.command (is it installed and on PATH?)",
            ) from None
        self._pending: dict[Any, Future[dict[str, Any]]] = {}
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._stderr = bytearray()
        self._ended: str | None = None
        self._on_notice = on_notice
        self._threads = [
            threading.Thread(target=target, daemon=True, name="toolctl-upstream")
            for target in (self._read, self._drain_stderr)
        ]
        for thread in self._threads:
            thread.start()

    @property
    def alive(self) -> bool:
        """False once the process ended or broke the protocol."""
        return self._ended is None

    def request(self, message: dict[str, Any]) -> Future[dict[str, Any]]:
        """Send a request; its answer arrives on the future."""
        future: Future[dict[str, Any]] = Future()
        with self._lock:
            if self._ended is not None:
                future.set_exception(UpstreamError(self._ended))
                return future
            self._pending[message["id"]] = future
        self._send(message)
        return future

    def notify(self, message: dict[str, Any]) -> None:
        """Send a notification."""
        self._send(message)

    def _send(self, message: dict[str, Any]) -> None:
        data = json.dumps(message, separators=(",", ":")).encode() + b"\n"
        try:
            with self._write_lock:
                assert self.proc.stdin is not None
                self.proc.stdin.write(data)
                self.proc.stdin.flush()
        except (OSError, ValueError):
            self._end("the upstream process closed its input")

    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        with out:  # closed by the thread that reads it, when the process has closed it
            self._read_lines(out)

    def _read_lines(self, out: Any) -> None:
        while True:
            line = out.readline(MAX_MESSAGE_BYTES + 1)
            if not line:
                code = self.proc.wait()
                self._end(f"the upstream process exited (status {code}){self._tail()}")
                return
            if len(line) > MAX_MESSAGE_BYTES:
                self._end(f"the upstream sent a message over {MAX_MESSAGE_BYTES >> 20} MiB")
                self._stop()
                continue  # read on to the end of its output, so the pipe is closed here
            if not line.strip():
                continue
            try:
                message = json.loads(line)
            except ValueError:
                continue  # a log line on stdout: not ours to fail on
            if isinstance(message, dict):
                self._dispatch(message)

    def _dispatch(self, message: dict[str, Any]) -> None:
        if "method" in message and "id" in message:  # a request from the upstream
            answer: dict[str, Any] = {"jsonrpc": "2.0", "id": message["id"]}
            if message["method"] == "ping":
                answer["result"] = {}
            else:
                answer["error"] = {"code": -32601, "message": "not supported by toolctl"}
            self._send(answer)
            return
        if "method" in message:
            if self._on_notice is not None:
                self._on_notice(message)
            return
        with self._lock:
            future = self._pending.pop(message.get("id"), None)
        if future is not None and not future.done():
            future.set_result(message)

    def _drain_stderr(self) -> None:
        err = self.proc.stderr
        assert err is not None
        with err:
            for chunk in iter(lambda: err.read1(65536), b""):  # type: ignore[attr-defined]
                self._stderr += chunk
                del self._stderr[:-STDERR_TAIL]

    def _tail(self) -> str:
        text = self._stderr.decode("utf-8", "replace").strip()
        return f"; its last output: {text[-600:]}" if text else ""

    def _end(self, why: str) -> None:
        with self._lock:
            if self._ended is None:
                self._ended = why
            pending, self._pending = self._pending, {}
        for future in pending.values():
            if not future.done():
                future.set_exception(UpstreamError(why))

    def close(self) -> None:
        """Stop the process group (SIGTERM, then SIGKILL after 2 s) and let the reader
        threads close its pipes."""
        self._end("the connection was closed")
        self._stop()
        for thread in self._threads:
            if thread is not threading.current_thread():
                thread.join(2.0)

    def _stop(self) -> None:
        with contextlib.suppress(OSError, ValueError), self._write_lock:
            assert self.proc.stdin is not None
            self.proc.stdin.close()
        if self.proc.poll() is not None:
            return
        for sig, wait in ((signal.SIGTERM, 2.0), (signal.SIGKILL, 2.0)):
            with contextlib.suppress(ProcessLookupError, PermissionError, OSError):
                if sys.platform != "win32":
                    os.killpg(self.proc.pid, sig)
                else:  # pragma: no cover
                    self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(wait)
                return


class HttpConnection:
    """An upstream at a Streamable HTTP URL: each request is a POST, answered with JSON or SSE."""

    def __init__(self, url: str, headers: Mapping[str, str], timeout: float) -> None:
        try:
            import httpx
        except ImportError:  # pragma: no cover - httpx comes with the http and mcp extras
            from toolctl.install import install_hint

            raise UpstreamError("an HTTP upstream needs httpx", hint=install_hint("http")) from None
        self.url = url
        self.headers = {
            "accept": "application/json, text/event-stream",
            "content-type": "application/json",
            **headers,
        }
        self.client = httpx.Client(timeout=timeout, follow_redirects=False)
        self._closed = False

    @property
    def alive(self) -> bool:
        """False once closed."""
        return not self._closed

    def request(self, message: dict[str, Any]) -> Future[dict[str, Any]]:
        """POST ``message`` on a thread of its own; the future gets the answer."""
        future: Future[dict[str, Any]] = Future()

        def work() -> None:
            try:
                future.set_result(self._post(message))
            except BaseException as exc:
                future.set_exception(exc)

        threading.Thread(target=work, daemon=True, name="toolctl-upstream").start()
        return future

    def notify(self, message: dict[str, Any]) -> None:
        """POST a notification (a 202 is expected)."""
        with contextlib.suppress(UpstreamError):
            self._post(message)

    def _post(self, message: dict[str, Any]) -> dict[str, Any]:
        import httpx

        body = json.dumps(message).encode()
        try:
            with self.client.stream("POST", self.url, content=body, headers=self.headers) as resp:
                if "mcp-session-id" in resp.headers:
                    self.headers["mcp-session-id"] = resp.headers["mcp-session-id"]
                if resp.status_code == 202 or "id" not in message:
                    return {}
                if resp.status_code >= 400:
                    raise UpstreamError(f"the upstream answered HTTP {resp.status_code}")
                kind = resp.headers.get("content-type", "")
                if "text/event-stream" in kind:
                    return _from_events(resp.iter_lines(), message["id"])
                data = _bounded(resp.iter_bytes())
        except httpx.HTTPError as exc:
            raise UpstreamError(f"cannot reach the upstream {self.url}: {exc}") from None
        try:
            answer = json.loads(data)
        except ValueError:
            raise UpstreamError("the upstream answered with invalid JSON") from None
        if not isinstance(answer, dict):
            raise UpstreamError("the upstream answered with a JSON-RPC batch or a non-object")
        return answer

    def close(self) -> None:
        """Close the HTTP client (the upstream's session ends with it)."""
        self._closed = True
        self.client.close()


def _bounded(chunks: Any) -> bytes:
    out = bytearray()
    for chunk in chunks:
        out += chunk
        if len(out) > MAX_MESSAGE_BYTES:
            raise UpstreamError(f"the upstream sent a message over {MAX_MESSAGE_BYTES >> 20} MiB")
    return bytes(out)


def _from_events(lines: Any, wanted: Any) -> dict[str, Any]:
    """The answer to request ``wanted`` from an SSE stream (other events are skipped)."""
    data: list[str] = []
    size = 0
    for line in lines:
        size += len(line)
        if size > MAX_MESSAGE_BYTES:
            raise UpstreamError(f"the upstream sent a stream over {MAX_MESSAGE_BYTES >> 20} MiB")
        if line.startswith("data:"):
            data.append(line[5:].lstrip())
        elif not line.strip() and data:
            with contextlib.suppress(ValueError):
                message = json.loads("\n".join(data))
                if isinstance(message, dict) and message.get("id") == wanted:
                    return message
            data = []
    raise UpstreamError("the upstream's event stream ended without an answer")


_ids = itertools.count(1)


def next_id() -> int:
    """A JSON-RPC request id unique in this process."""
    return next(_ids)
