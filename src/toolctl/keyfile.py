"""Secret key files: created once 0600, read only when safe to trust.

Every key toolctl keeps in a file goes through here, so all get the same checks: the cache's
MAC key (``cache.key`` in the user's data dir, :mod:`toolctl.cache`), the run history's binding
key (``state.db.key``, :mod:`toolctl.runtime.history.binding`) and the server's ``requestState``
sealing key (``request-state.key``, :mod:`toolctl.server.roundtrip`).

* the file is opened ``O_NONBLOCK`` and checked with ``fstat`` on the open descriptor: a FIFO,
  device or directory planted under the key's name is refused at once (a FIFO opened for
  reading would otherwise block until a writer came, hanging every command), and nothing can
  be swapped in between the check and the read;
* a key owned by another user, or readable or writable by group or others, is refused:
  whoever could read it could forge what it seals;
* at most :data:`MAX_KEY_FILE_BYTES` are read;
* a new key is written under a temporary name and linked into place, so a concurrent reader
  sees the whole key or none, and two creators agree on the first one linked.

Anything refused is a :class:`KeyFileError` whose message names the file and whose hint says
how to fix it; it never holds the key.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from toolctl.errors import ToolctlError

KEY_BYTES = 32
MAX_KEY_FILE_BYTES = 4096
_READ_FLAGS = os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)


class KeyFileError(ToolctlError):
    """The key file cannot be used (the message says why, the hint how to fix it)."""


def read_key_file(path: Path, what: str = "the key file") -> bytes:
    """The bytes of the key file ``path`` (``what`` names it in errors), or a
    :class:`KeyFileError` saying what is wrong with it and how to fix it."""
    remedy = f"delete {path} to make a new key"
    try:
        fd = os.open(path, _READ_FLAGS)
    except OSError as exc:
        raise KeyFileError(f"cannot read {what} {path}: {exc.strerror}", hint=remedy) from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise KeyFileError(
                f"{what} {path} is not a regular file (a FIFO, device or directory)",
                hint=remedy,
            )
        if hasattr(os, "geteuid") and info.st_uid != os.geteuid():
            raise KeyFileError(f"{what} {path} belongs to another user", hint=remedy)
        if info.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise KeyFileError(
                f"{what} {path} is readable or writable by other users "
                f"(mode {stat.S_IMODE(info.st_mode):o}); what it seals cannot be trusted",
                hint=f"chmod 600 {path} (or {remedy})",
            )
        data = os.read(fd, MAX_KEY_FILE_BYTES + 1)
    except OSError as exc:
        raise KeyFileError(f"cannot read {what} {path}: {exc.strerror}", hint=remedy) from None
    finally:
        os.close(fd)
    if len(data) > MAX_KEY_FILE_BYTES:
        raise KeyFileError(f"{what} {path} is too large to be a key", hint=remedy)
    return data


def ensure_key_file(path: Path, content: bytes, what: str = "the key file") -> bytes:
    """The bytes of the key file ``path``: read (checked) when it exists, else created with
    ``content`` (mode 0600, a missing directory 0700) and ``content`` returned. A racing
    creator's key wins if linked first; then that key is read and returned."""
    if os.path.lexists(path):
        return read_key_file(path, what)
    import secrets  # only when a key is made (imports random: not on every command)

    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
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
        raise KeyFileError(f"cannot create {what} {path}: {exc.strerror}") from None
    finally:
        tmp.unlink(missing_ok=True)
    return content


def read_key(path: Path, what: str = "the key file") -> bytes:
    """The hex key in ``path``; :class:`KeyFileError` when missing, unsafe or malformed."""
    return _hex_key(read_key_file(path, what), path, what)


def load_or_create_key(path: Path, what: str = "the key file") -> bytes:
    """The hex key in ``path``, created from :data:`KEY_BYTES` random bytes when missing."""
    fresh = os.urandom(KEY_BYTES).hex().encode("ascii")
    return _hex_key(ensure_key_file(path, fresh, what), path, what)


def _hex_key(data: bytes, path: Path, what: str) -> bytes:
    try:
        key = bytes.fromhex(data.decode("ascii").strip())
    except (UnicodeDecodeError, ValueError):
        key = b""
    if len(key) < KEY_BYTES // 2:
        raise KeyFileError(
            f"{what} {path} does not hold a key", hint=f"delete {path} to make a new key"
        )
    return key
