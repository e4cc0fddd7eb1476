"""Strict YAML files: reading them (bounded), the loaded :class:`Document` with line and column
for every node, and the collector pauses around building large trees. The parser itself lives in
:mod:`toolctl.yamlparse`, imported on the first parse: a command that loads every file from the
load cache never imports PyYAML (about 15 ms of every small command).

Built directly on libyaml's event stream (PyYAML ``CParser``), which is both the strictest and the
cheapest way to load: one pass rejects anchors and aliases, tags, duplicate and non-string keys,
merge keys, multiple documents and excessive nesting, resolves plain scalars by the YAML 1.2 core
schema (``+1``, ``0x10``, ``0o17``, ``1e3`` are numbers; only ``true``/``false`` are booleans;
``NO``, ``on``, ``1:30`` and dates stay strings, and so does ``0755``, octal to YAML 1.1),
and records where each value and key starts. Nothing in a file can run code or expand in memory.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path
from typing import Any

from toolctl.errors import YamlError

# The document and the limits (yamldoc) and the collector pauses (gcpause) have modules of their
# own, which the parser imports without importing this module; they are part of its API.
from toolctl.gcpause import freeze_for_good as freeze_for_good
from toolctl.gcpause import gc_paused as gc_paused
from toolctl.gcpause import unfreeze as unfreeze
from toolctl.yamldoc import MAX_DEPTH as MAX_DEPTH
from toolctl.yamldoc import MAX_FILE_BYTES as MAX_FILE_BYTES
from toolctl.yamldoc import MAX_INT_DIGITS as MAX_INT_DIGITS
from toolctl.yamldoc import Document as Document
from toolctl.yamldoc import JsonPath as JsonPath


def real_path(path: Path) -> Path:
    """``path`` absolute with its symlinks resolved, as far as they resolve.

    Unlike ``Path.resolve()`` (``RuntimeError`` on Python 3.11, ``OSError`` later) a symlink
    loop does not raise: the looping part stays unresolved, and reading the file then reports
    the loop (see :func:`read_text`).
    """
    return Path(os.path.realpath(path))


def _unreadable(exc: OSError) -> YamlError:
    if exc.errno == errno.ELOOP:
        return YamlError(
            "symlink loop: the link points back at itself (directly or through other links)",
            code="TC110",
            hint="point the symlink at a real file, or remove it",
        )
    return YamlError(
        f"cannot read file: {exc.strerror}", code="TC110", hint="check the file's permissions"
    )


def read_text(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> str:
    """Read a regular UTF-8 file of at most ``max_bytes`` without ever reading more than that.

    FIFOs, devices and directories are refused before opening; a BOM is accepted.
    """
    return decode_text(read_bytes(path, max_bytes=max_bytes))


def may_hold_directive(data: bytes) -> bool:
    """Whether a file's bytes may hold a ``# toolctl: ...`` comment (an ignore or a misspelt
    directive). Every tool file starts with ``toolctl: 1``, which is not one: ``toolctl:`` at
    the start of a line has no ``#`` before it. (Lint reads a file for ignores only if so.)"""
    count = data.count(b"toolctl:")
    if count != 1:
        return count > 1
    at = data.index(b"toolctl:")
    return not (at == 0 or data[at - 1 : at] == b"\n" or data[:at] == b"\xef\xbb\xbf")


def read_bytes(path: Path, *, max_bytes: int = MAX_FILE_BYTES) -> bytes:
    """The bytes of a regular file of at most ``max_bytes`` (see :func:`read_text`)."""
    try:
        st = path.stat()
    except OSError as exc:
        raise _unreadable(exc) from None
    if not stat.S_ISREG(st.st_mode):
        raise YamlError(
            "not a regular file (FIFOs, devices and directories are refused)", code="TC110"
        )
    if st.st_size > max_bytes:
        raise YamlError(
            f"file larger than {max_bytes} bytes ({st.st_size} bytes)",
            code="TC108",
            hint="split it into several files",
        )
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
        try:
            raw = _read_fd(fd, min(st.st_size, max_bytes) + 1, max_bytes + 1)
        finally:
            os.close(fd)
    except OSError as exc:  # unreadable (permissions) or gone since the stat
        raise _unreadable(exc) from None
    if len(raw) > max_bytes:
        raise YamlError(
            f"file larger than {max_bytes} bytes", code="TC108", hint="split it into several files"
        )
    return raw


def _read_fd(fd: int, expect: int, limit: int) -> bytes:
    """At most ``limit`` bytes of ``fd``, asking for ``expect`` (the size the stat gave, plus
    one) first: a buffered ``read(limit)`` would allocate ``limit`` bytes for every file, which
    was most of the time of reading thousands of small ones. A short read is the end of a
    regular file; a file that grew since the stat is read on, in chunks, up to ``limit``."""
    chunks: list[bytes] = []
    total, want = 0, min(expect, limit)
    while want > 0:
        chunk = os.read(fd, want)
        chunks.append(chunk)
        total += len(chunk)
        if len(chunk) < want:
            break
        want = min(64 * 1024, limit - total)
    return chunks[0] if len(chunks) == 1 else b"".join(chunks)


_BOM = b"\xef\xbb\xbf"


def decode_text(raw: bytes) -> str:
    """UTF-8 text (a BOM accepted); :class:`YamlError` with line and column otherwise."""
    # "utf-8-sig" itself is a codec written in Python (a lookup and a call per file): the BOM
    # is dropped here and the rest decoded by the built-in UTF-8 decoder, which is what that
    # codec does; an error's offset is then one into the rest
    body = raw[3:] if raw[:3] == _BOM else raw
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = body.count(b"\n", 0, exc.start) + 1
        col = exc.start - (body.rfind(b"\n", 0, exc.start) + 1) + 1
        raise YamlError(
            f"file is not valid UTF-8 (byte 0x{body[exc.start]:02x})",
            line=line,
            col=col,
            code="TC109",
            hint="save the file as UTF-8",
        ) from None


def loads(text: str, file: str = "<string>") -> Document:
    """Parse strict YAML ``text``; raise :class:`YamlError` with line and column on any problem.

    Text the fast parser reads exactly as the strict one (most files) is read by it, with
    positions on demand (see :mod:`toolctl.yamlfast`); the rest, errors included, strictly."""
    from toolctl.yamlfast import parse as fast_parse

    doc = fast_parse(text)
    if doc is not None:
        doc.file = file
        return doc
    from toolctl.yamlparse import parse

    return parse(text, file)


def dumps(data: Any, *, base: Any = None, **options: Any) -> str:
    """``data`` as YAML that :func:`loads` reads back unchanged (``"0o17"`` and ``"1e3"`` are
    quoted, which a YAML 1.1 emitter such as PyYAML's leaves plain); ``options`` go to
    ``yaml.dump`` (``sort_keys``, ``width``, ...). ``base`` is a dumper (default
    ``yaml.SafeDumper``) whose representers (layout, string styles) apply to every string that
    needs no quotes."""
    from toolctl.yamlparse import dump

    return dump(data, base=base, **options)


def load_file(
    path: Path, display: str | None = None, *, max_bytes: int = MAX_FILE_BYTES
) -> Document:
    """Read and parse one file; errors carry ``display`` (default: the path) as the file name."""
    name = display or str(path)
    text = read_text(path, max_bytes=max_bytes)
    doc = loads(text, name)
    doc.file = name
    doc.positions_from(path)
    return doc
