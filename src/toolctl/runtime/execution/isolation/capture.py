"""Bounded buffers for what an isolated handler writes: a tail of its output, a capped result.

Both sides of ``isolation: subprocess`` (the caller and the supervisor) drain every pipe they
read as fast as it fills, so a writer never blocks, and keep only a bounded amount of it: a
handler that prints 800 MiB costs its callers ``TAIL_BYTES`` of memory, not 800 MiB.
"""

from __future__ import annotations

import os

TAIL_BYTES = 64 * 1024  # how much of a handler's stdout/stderr is kept (the end of it)
MAX_RESULT_BYTES = 16 * 1024 * 1024  # the largest result (JSON text) a handler may return
READ_BYTES = 256 * 1024


class Tail:
    """The last ``limit`` bytes fed, and how many bytes before them were dropped."""

    def __init__(self, limit: int = TAIL_BYTES) -> None:
        self.limit = limit
        self.dropped = 0
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        self._buf += data
        extra = len(self._buf) - self.limit
        if extra > 0:
            del self._buf[:extra]
            self.dropped += extra

    def text(self) -> str:
        """The kept bytes as text (a character cut at the start becomes U+FFFD)."""
        return self._buf.decode("utf-8", "replace")


class Capped:
    """The first ``limit`` bytes fed; ``total`` counts everything, kept or not."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.total = 0
        self._buf = bytearray()

    def feed(self, data: bytes) -> None:
        self.total += len(data)
        room = self.limit - len(self._buf)
        if room > 0:
            self._buf += data[:room]

    @property
    def overflowed(self) -> bool:
        return self.total > self.limit

    def data(self) -> bytes:
        return bytes(self._buf)


Sink = Tail | Capped


def read_once(fd: int, sink: Sink) -> bool:
    """Move what ``fd`` (non-blocking) holds now into ``sink``; False at end of file."""
    try:
        data = os.read(fd, READ_BYTES)
    except BlockingIOError:
        return True
    except OSError:  # EIO and the like: the writer is gone
        return False
    if not data:
        return False
    sink.feed(data)
    return True


def drain(fd: int, sink: Sink, max_reads: int = 64) -> None:
    """Read what ``fd`` holds right now, without waiting for an end of file that may not come."""
    for _ in range(max_reads):
        try:
            data = os.read(fd, READ_BYTES)
        except OSError:  # BlockingIOError included: nothing more for now
            return
        if not data:
            return
        sink.feed(data)


def write_all(fd: int, data: bytes) -> None:
    """Write all of ``data`` to the blocking ``fd``."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def size_text(n: int) -> str:
    """``n`` bytes for a person: 512 B, 64 KiB, 128.0 MiB."""
    if n < 1024:
        return f"{n} B"
    if n < 1024 * 1024:
        return f"{n // 1024} KiB"
    return f"{n / (1024 * 1024):.1f} MiB"
