"""Secret key files: 32 random bytes as hex, mode 0600, created once, read without surprises.

:func:`read_key` opens without blocking (a FIFO planted as the key cannot hang the reader) and
accepts only a regular file owned by this user that no one else may read or write; anything
else is a :class:`KeyFileError`, never a key. :func:`load_or_create_key` makes the file when it
is missing: written under a temporary name and linked into place, so a concurrent reader sees
the whole key or none, and two creators agree on the first one linked.
"""

from __future__ import annotations

import os
import secrets
import stat
from pathlib import Path

KEY_BYTES = 32
_MAX_TEXT = 4 * KEY_BYTES  # hex of a key, with room for a line end; a longer file is not one


class KeyFileError(ValueError):
    """The key file cannot be used (the message says why; it never holds the key)."""


def read_key(path: Path) -> bytes:
    """The key in ``path``; :class:`KeyFileError` when missing, unsafe or malformed."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as exc:
        raise KeyFileError(f"cannot open {path}: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise KeyFileError(f"{path} is not a regular file")
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise KeyFileError(f"{path} belongs to another user")
        if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            mode = stat.S_IMODE(info.st_mode)
            raise KeyFileError(f"{path} is readable or writable by other users (mode {mode:o})")
        text = os.read(fd, _MAX_TEXT + 1)
    except OSError as exc:
        raise KeyFileError(f"cannot read {path}: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    try:
        key = bytes.fromhex(text.decode("ascii").strip()) if len(text) <= _MAX_TEXT else b""
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) < KEY_BYTES // 2:
        raise KeyFileError(f"{path} does not hold a key")
    return key


def load_or_create_key(path: Path) -> bytes:
    """The key in ``path``, created (mode 0600, its directory 0700) when missing."""
    if os.path.lexists(path):
        return read_key(path)
    key = secrets.token_bytes(KEY_BYTES)
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, key.hex().encode("ascii"))
            os.fsync(fd)
        finally:
            os.close(fd)
        os.link(tmp, path)
    except FileExistsError:
        return read_key(path)  # another process made it first
    except OSError as exc:
        raise KeyFileError(f"cannot create {path}: {exc.strerror or exc}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return key
