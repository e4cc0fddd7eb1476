"""Where ``toolctl export`` writes its JSON: stdout, or a file replaced only by a whole export.

The export is written while it is made (:mod:`toolctl.export.stream`); into ``-o FILE`` it goes
under a temporary name in the same directory, renamed into place when the export succeeded,
so a refused or interrupted export never leaves a half-written or emptied file.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

DEFAULT_INDENT = 2  # on a terminal, for people; one line into a file or pipe, for programs


class Target:
    """The text stream an export writes to, and the indent it uses (``--indent``, else the
    default for where it goes)."""

    def __init__(self, stream: IO[str], indent: int | None) -> None:
        self.stream = stream
        self.indent = indent
        self.keep = False  # set when the export succeeded: then a file replaces the old one

    def write(self, text: str) -> Any:
        return self.stream.write(text)


def _indent(given: int | None, terminal: bool) -> int | None:
    if given is None:
        return DEFAULT_INDENT if terminal else None
    return given or None  # --indent 0: one line


def _cannot_write(output: Path, exc: OSError) -> Exception:
    from toolctl.errors import UsageError

    return UsageError(
        f"cannot write {output}: {exc.strerror or exc}",
        hint="check that the directory exists and is writable",
    )


@contextlib.contextmanager
def exported_to(output: Path | None, indent: int | None) -> Iterator[Target]:
    """The target for ``-o output`` (None: stdout); a file that cannot be written is a usage
    error (exit 2) naming it, not a traceback."""
    if output is None:
        from toolctl.cli.render import _is_terminal

        yield Target(sys.stdout, _indent(indent, _is_terminal(sys.stdout)))
        return
    tmp = output.with_name(f".{output.name}.{os.getpid()}.{os.urandom(4).hex()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as exc:
        raise _cannot_write(output, exc) from None
    try:
        with open(fd, "w", encoding="utf-8") as stream:
            target = Target(stream, _indent(indent, terminal=False))
            yield target
        if target.keep:
            os.replace(tmp, output)
    except OSError as exc:
        raise _cannot_write(output, exc) from None
    finally:
        with contextlib.suppress(OSError):
            tmp.unlink()
