"""Writing an export as JSON while it is made: memory for one tool's entries, not the registry's.

:func:`write_export` gives the text :func:`toolctl.export.export` data would give through
``json.dumps(data, indent=indent, ensure_ascii=False)``, byte for byte, without holding the
whole export. A built-in format's entries are encoded as each tool is converted, into an
anonymous temporary file (the spool); the result keeps a small stand-in per entry (its
top-level scalars, which a format's request wrapper may read, such as ``defer_loading``). Only
when the export has no error is anything written to ``out``: the request fragment, with each
stand-in replaced by its text. A refused export writes nothing. Another format's data is
built whole by its exporter, then written the same way, piece by piece.

The exporters stay pure; this module is the serializer around them (its only I/O is the spool
and ``out``, both given or made here).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from toolctl.export.base import ExportResult

__all__ = ["write_export"]

_SCALARS = (str, int, float, bool, type(None))
_NESTED = 4  # containers this deep are the request's own structure; deeper ones are entries'


class TextOut(Protocol):
    """Where the JSON goes: anything with a text ``write`` (a file, ``sys.stdout``)."""

    def write(self, text: str, /) -> Any: ...


class Spooled(dict[str, Any]):
    """One entry written to the spool: its top-level scalar items, and where its text is."""

    __slots__ = ("offset", "size")

    offset: int
    size: int


class _Spool:
    """The entries' text, in an anonymous temporary file (gone when closed)."""

    def __init__(self, indent: int | None) -> None:
        self.indent = indent
        import tempfile  # (with shutil and random) only once an export has entries to spool

        self.file = tempfile.TemporaryFile()  # noqa: SIM115 - closed by write_export
        self.end = 0

    def keep(self, entries: list[Any]) -> list[Any]:
        """``entries`` encoded into the spool, as stand-ins (what ``export_each`` holds)."""
        return [self._one(entry) for entry in entries]

    def _one(self, entry: Any) -> Any:
        if not isinstance(entry, dict):
            return json.loads(_dumps(entry, None))  # a detached copy, as export gives
        data = _dumps(entry, self.indent).encode("utf-8")
        self.file.seek(self.end)
        self.file.write(data)
        stand_in = Spooled((k, v) for k, v in entry.items() if isinstance(v, _SCALARS))
        stand_in.offset, stand_in.size = self.end, len(data)
        self.end += len(data)
        return stand_in

    def text(self, stand_in: Spooled) -> str:
        self.file.seek(stand_in.offset)
        return self.file.read(stand_in.size).decode("utf-8")


def _dumps(value: Any, indent: int | None) -> str:
    return json.dumps(value, indent=indent, ensure_ascii=False, allow_nan=False)


def write_export(
    tools: Any,
    fmt: str,
    out: TextOut,
    *,
    indent: int | None = None,
    names: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    toolsets: Sequence[str] | None = None,
    **options: Any,
) -> ExportResult:
    """Export like :func:`toolctl.export.export_result` and, when nothing is an error, write
    the JSON (then a newline) to ``out``; ``indent`` as for ``json.dumps`` (None: one line).

    The result's ``data`` is None either way (it was written, not kept).
    """
    from toolctl.export import export_selected

    spool = _Spool(indent)
    try:
        result = export_selected(tools, fmt, names, tags, toolsets, spool.keep, options)
        if result.ok and result.data is not None:
            _Writer(out.write, spool, indent).value(result.data, 0)
            out.write("\n")
    finally:
        spool.file.close()
    return ExportResult(result.format, None, result.diagnostics)


class _Writer:
    """``json.dumps`` of a value holding stand-ins, written piece by piece."""

    def __init__(self, write: Callable[[str], Any], spool: _Spool, indent: int | None) -> None:
        self.write = write
        self.spool = spool
        self.indent = indent
        # json.dumps: (", ", ": ") on one line, ("," , ": ") with an indent
        self.item = ", " if indent is None else ","
        self.pad = "" if indent is None else " " * indent

    def _reindent(self, text: str, depth: int) -> str:
        # JSON text has no raw newline inside a string: each one starts a nested line
        if self.indent is None or depth == 0:
            return text
        return text.replace("\n", "\n" + self.pad * depth)

    def value(self, value: Any, depth: int) -> None:
        if isinstance(value, Spooled):
            self.write(self._reindent(self.spool.text(value), depth))
        elif depth < _NESTED and isinstance(value, (dict, list)) and value:
            self._container(value, depth)
        else:
            self.write(self._reindent(_dumps(value, self.indent), depth))

    def _container(self, value: dict[str, Any] | list[Any], depth: int) -> None:
        is_dict = isinstance(value, dict)
        self.write("{" if is_dict else "[")
        inner = "" if self.indent is None else "\n" + self.pad * (depth + 1)
        items = value.items() if isinstance(value, dict) else ((None, v) for v in value)
        for i, (key, child) in enumerate(items):
            self.write((self.item if i else "") + inner)
            if is_dict:
                self.write(_dumps(key, None) + ": ")
            self.value(child, depth + 1)
        self.write(
            ("" if self.indent is None else "\n" + self.pad * depth) + ("}" if is_dict else "]")
        )
