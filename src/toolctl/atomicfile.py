"""Writing a file so that readers see the old content or the new one, never part of one."""

from __future__ import annotations

import contextlib
import os
from pathlib import Path


def replace(target: Path, data: bytes, mode: int = 0o666) -> None:
    """Write ``data`` to ``target`` under a temporary name in the same directory, then rename it
    into place. ``mode`` as for ``os.open`` (the umask applies). OSError when it cannot be
    written; the temporary file is removed then."""
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode), "wb") as fh:
            fh.write(data)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            tmp.unlink()
        raise
