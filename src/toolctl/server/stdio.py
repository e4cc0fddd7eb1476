"""An event-driven stdio transport for the MCP server.

The SDK's ``stdio_server`` reads stdin and writes stdout through ``anyio.wrap_file``: every
read, write and flush is a hop to a worker thread, about a dozen per ``tools/call``, which on a
small machine costs more than the call itself. Here the same descriptors are served by the
event loop (``connect_read_pipe`` / ``connect_write_pipe``), and the SDK's ``stdio_server``
still does the framing and message parsing. Each line passes ``strictwire.guard`` first
(duplicate keys in ``tools/call`` arguments, which the SDK's parser would drop).

The SDK's descriptor claim is kept: while serving, fd 0 reads the null device and fd 1 points
at stderr, so a handler's ``print()`` (or a child process) can never write onto the wire.
The claim uses private SDK helpers (``mcp.server.stdio._claim_fd`` and the diversions): when
they are missing or their signature changed, or stdin/stdout are not pipes (a regular file, a
replaced ``sys.stdin``), the SDK's own file transport is used: it claims stdout, and stdin is
read on a worker thread from a private duplicate of fd 0 (fd 0 itself diverted to the null
device) with every line still passing ``strictwire.guard``.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import stat
import sys
from collections.abc import AsyncIterator, Callable
from typing import Any, BinaryIO, cast

import anyio

from toolctl.server.strictwire import guard

log = logging.getLogger("toolctl.server")

LINE_LIMIT = 1 << 30  # the SDK's transport reads lines of any length; only guard the absurd


class _Lines:
    """Async iteration over the lines of stdin, decoded as the SDK's transport does."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    def __aiter__(self) -> _Lines:
        return self

    async def __anext__(self) -> str:
        line = await self._reader.readline()
        if not line:
            raise StopAsyncIteration
        text = line.decode("utf-8", errors="replace")
        # The guard reads what the SDK will parse: an invalid byte is U+FFFD to both.
        guarded = guard(text.encode() if "\ufffd" in text else line)
        return text if guarded is None else guarded.decode() + "\n"


class _Output:
    """``write`` + ``flush`` onto stdout through the loop's pipe transport."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer

    async def write(self, text: str) -> None:
        self._writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self._writer.drain()  # waits only while the client is not reading


# The SDK's private helpers this transport claims the descriptors with (fd claim, stdin
# diversion, stdout diversion): another SDK release may drop them or change their signature,
# and then its own transport is used. Public so that a test can name others.
SDK_CLAIM_HELPERS = ("_claim_fd", "_open_stdin_diversion", "_open_stdout_diversion")


def _claim_helpers() -> tuple[Callable[..., Any], Callable[[], int], Callable[[], int]] | None:
    import mcp.server.stdio as sdk

    try:
        claim, stdin_diversion, stdout_diversion = (getattr(sdk, n) for n in SDK_CLAIM_HELPERS)
    except AttributeError:  # another SDK release: its own transport is used
        return None
    return claim, stdin_diversion, stdout_diversion


@contextlib.asynccontextmanager
async def stdio_streams() -> AsyncIterator[tuple[Any, Any]]:
    """The ``(read, write)`` message streams of the MCP session over this process's stdio."""
    from mcp.server.stdio import stdio_server

    restores: list[Callable[[], None]] = []
    transports: list[asyncio.BaseTransport] = []
    try:
        pipes = await _claim_pipes(restores, transports)
        if pipes is None:  # undo, then serve through the SDK's file transport
            _release(restores, transports)
            # Thread-backed reads, as the SDK's own; _Lines only awaits readline().
            lines = _Lines(cast(Any, anyio.wrap_file(_divert_stdin(restores))))
            async with stdio_server(stdin=cast(Any, lines)) as streams:  # it claims stdout
                yield streams
        else:
            # Duck-typed: the SDK only iterates lines and awaits write and flush.
            lines, output = cast(Any, pipes[0]), cast(Any, pipes[1])
            async with stdio_server(stdin=lines, stdout=output) as streams:
                yield streams
    finally:
        _release(restores, transports)


async def _claim_pipes(
    restores: list[Callable[[], None]], transports: list[asyncio.BaseTransport]
) -> tuple[_Lines, _Output] | None:
    """Claim fds 0 and 1 as the SDK does and connect their private duplicates to the loop;
    None when that is not possible here."""
    helpers = _claim_helpers()
    if helpers is None:
        return None
    claim, stdin_diversion, stdout_diversion = helpers
    buffers = []
    for fd, stream, mode, diversion in (
        (0, sys.stdin, "rb", stdin_diversion),
        (1, sys.stdout, "wb", stdout_diversion),
    ):
        try:
            buffer, restore = claim(fd, stream, mode, diversion)
        except (TypeError, ValueError) as exc:  # a private helper changed in another SDK release
            log.debug("the SDK's fd claim helpers changed (%s); using its own transport", exc)
            return None
        if restore is not None:
            restores.append(restore)
        buffers.append(buffer)
    if len(restores) != 2 or any(_fileno(b) <= 2 for b in buffers):
        return None  # served in place (not a private duplicate): leave it to the SDK
    if not all(_pollable(_fileno(b)) for b in buffers):
        return None  # /dev/null, a regular file: the event loop cannot watch it
    try:
        return await _connect(buffers[0], buffers[1], transports)
    except (OSError, ValueError) as exc:  # not pipes (a regular file, say)
        log.debug("stdio is not a pipe (%s); using the SDK's file transport", exc)
        return None


def _divert_stdin(restores: list[Callable[[], None]]) -> BinaryIO:
    """The wire's stdin for the fallback transport: a private duplicate of fd 0, with fd 0
    reading the null device (restored on release) so that a handler or a child process never
    reads the wire; ``sys.stdin``'s own buffer when that is not possible."""
    if _fileno(sys.stdin) != 0:
        return sys.stdin.buffer
    try:
        null = os.open(os.devnull, os.O_RDONLY)
    except OSError:
        return sys.stdin.buffer
    try:
        private = os.dup(0)  # non-inheritable, above 2: fds 0 to 2 are open
        os.dup2(null, 0)  # cannot fail once the duplicate exists (both fds are valid)
    except OSError:
        return sys.stdin.buffer
    finally:
        os.close(null)

    def restore() -> None:
        with contextlib.suppress(OSError):
            os.dup2(private, 0)

    restores.append(restore)
    # closefd=False: a worker thread may still block on it after the session ends.
    return os.fdopen(private, "rb", closefd=False)


def _pollable(fd: int) -> bool:
    """Whether the event loop can watch ``fd``: a pipe, a socket or a terminal. asyncio accepts
    any character device, but epoll refuses some (``/dev/null``), and only later, in a callback
    that logs a traceback instead of raising."""
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or (stat.S_ISCHR(mode) and os.isatty(fd))


def _fileno(buffer: Any) -> int:
    try:
        return int(buffer.fileno())
    except (AttributeError, OSError, ValueError):
        return -1


def _release(restores: list[Callable[[], None]], transports: list[asyncio.BaseTransport]) -> None:
    """Close the pipe transports (the private fds stay open: the claim restores from them),
    make the descriptors blocking again, and point fds 0 and 1 back at the wire."""
    while transports:
        transport = transports.pop()
        pipe = transport.get_extra_info("pipe")
        transport.close()
        with contextlib.suppress(OSError, ValueError, AttributeError):
            os.set_blocking(pipe.fileno(), True)
    while restores:
        restores.pop()()


async def _connect(
    stdin_buffer: Any, stdout_buffer: Any, transports: list[asyncio.BaseTransport]
) -> tuple[_Lines, _Output]:
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    read_transport, _ = await loop.connect_read_pipe(
        lambda: asyncio.StreamReaderProtocol(reader), stdin_buffer
    )
    transports.append(read_transport)
    write_transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, stdout_buffer
    )
    transports.append(write_transport)
    # flush() returns only once the message is on the pipe, so nothing is left in a buffer
    # when the session ends and the loop stops.
    write_transport.set_write_buffer_limits(high=0)
    writer = asyncio.StreamWriter(write_transport, protocol, None, loop)
    return _Lines(reader), _Output(writer)
