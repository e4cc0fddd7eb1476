"""Secret key files kept beside the run history: created 0600, read only when safe to trust.

Two keys live in files: the run history's binding key (``state.db.key``, see
:mod:`toolctl.runtime.binding`) and the server's ``requestState`` sealing key
(``request-state.key``). Both are read and created here, so both get the same checks:

* the file is opened ``O_NONBLOCK`` and checked with ``fstat`` on the open descriptor: a FIFO,
  device or directory planted under the key's name is refused at once (a FIFO opened for reading
  would otherwise block until a writer came, hanging every command), and nothing can be swapped
  in between the check and the read;
* a key readable or writable by group or others is refused: whoever could read it could forge
  what it seals;
* at most :data:`MAX_KEY_FILE_BYTES` are read;
* a new key is written to a temporary file and linked into place, so a concurrent reader sees
  the whole key or none, and two creators agree on the first one linked.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

from toolctl.runtime.errors import StateError

MAX_KEY_FILE_BYTES = 4096
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


def read_key_file(path: Path, what: str) -> bytes:
    """The bytes of the key file ``path`` (``what`` names it in errors), or a
    :class:`StateError` saying what is wrong with it and how to fix it."""
    remedy = f"delete {path} to make a new key (pending runs then need a new request)"
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        raise StateError(f"cannot read {what} {path}: {exc.strerror}", hint=remedy) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise StateError(
                f"{what} {path} is not a regular file (a FIFO, device or directory)",
                hint=remedy,
            )
        if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise StateError(
                f"{what} {path} is readable or writable by other users "
                f"(mode {stat.S_IMODE(info.st_mode):o}); what it seals cannot be trusted",
                hint=f"chmod 600 {path} (or {remedy})",
            )
        data = os.read(fd, MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise StateError(f"cannot read {what} {path}: {exc.strerror}", hint=remedy) from None
    finally:
        os.close(fd)
    if len(data) > MAX_KEY_FILE_BYTES:
        raise StateError(f"{what} {path} is too large to be a key", hint=remedy)
    return data


def ensure_key_file(path: Path, content: bytes, what: str) -> bytes:
    """The bytes of the key file ``path``: read (checked) when it exists, else created with
    ``content`` (mode 0600) and ``content`` returned. A racing creator's key wins if linked
    first; then that key is read and returned."""
    if path.exists() or path.is_symlink():
        return read_key_file(path, what)
    tmp = path.with_name(f"{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, content)
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(tmp, path)
    except FileExistsError:
        return read_key_file(path, what)  # another process made it first
    except OSError as exc:
        raise StateError(f"cannot create {what} {path}: {exc.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return content
