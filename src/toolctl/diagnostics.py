"""Located findings: the one shape every user-facing problem takes.

A :class:`Diagnostic` names the file, line and column (1-based), a stable code, a message and,
where one exists, a hint with the fix. It is pure data: rendering lives in the CLI.
"""

from __future__ import annotations

import enum
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from toolctl.yamldoc import Document, JsonPath

_T = TypeVar("_T")


def json_pointer(path: Iterable[str | int]) -> str:
    """The RFC 6901 pointer for a JSON path (``("a/b", 0)`` → ``/a~1b/0``; ``""`` for the root)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path)


class Severity(str, enum.Enum):
    """How bad a finding is; ordered error > warning > info."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return {"error": 3, "warning": 2, "info": 1}[self.value]


@dataclass(frozen=True)
class Location:
    """A place in a file: ``file`` as given (usually relative), 1-based ``line`` and ``col``.

    ``line == 0`` means the location is the file as a whole.
    """

    file: str
    line: int = 0
    col: int = 0

    def __str__(self) -> str:
        if self.line <= 0:
            return self.file
        return f"{self.file}:{self.line}:{self.col}"


class DeferredLocation(Location):
    """A :class:`Location` in a loaded document whose line and column are looked up when first
    read. Each tool's location built at load time would read the positions of every file,
    which the fast YAML parser leaves unread until one is asked for (see
    :class:`toolctl.yamldoc.Document`); most tools' locations are never printed."""

    def __init__(self, file: str, document: Document, path: JsonPath) -> None:
        object.__setattr__(self, "file", file)
        object.__setattr__(self, "_at", (document, path))
        object.__setattr__(self, "_found", None)

    @property
    def line(self) -> int:
        return self._where()[0]

    @property
    def col(self) -> int:
        return self._where()[1]

    @property
    def resolved(self) -> bool:
        """Whether the line and column have been looked up (or were known)."""
        return self.__dict__["_found"] is not None or self.__dict__["_at"][0].arrays() is not None

    def _where(self) -> tuple[int, int]:
        found: tuple[int, int] | None = self.__dict__["_found"]
        if found is None:
            document, path = self.__dict__["_at"]
            if len(path) == 1 and type(path[0]) is str:  # a tool's name in a one-tool file
                found = document.locate_root_value(path[0])
            else:
                found = document.locate(path)
            object.__setattr__(self, "_found", found)
        return found

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Location):
            return NotImplemented
        return (self.file, self.line, self.col) == (other.file, other.line, other.col)

    def __hash__(self) -> int:
        return hash((self.file, self.line, self.col))

    def __repr__(self) -> str:
        return f"Location(file={self.file!r}, line={self.line!r}, col={self.col!r})"

    def __reduce__(self) -> Any:  # pickled (to a worker) as the plain location it is
        return (Location, (self.file, self.line, self.col))


@dataclass(frozen=True)
class Diagnostic:
    """One finding: ``file:line:col: severity CODE message``."""

    severity: Severity
    code: str
    message: str
    file: str = ""
    line: int = 0
    col: int = 0
    pointer: str = ""
    hint: str | None = None
    tool: str | None = None
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)

    @classmethod
    def at(
        cls,
        loc: Location | None,
        severity: Severity,
        code: str,
        message: str,
        **kwargs: Any,
    ) -> Diagnostic:
        """Build a diagnostic at ``loc`` (or with no location)."""
        if loc is None:
            return cls(severity, code, message, **kwargs)
        return cls(severity, code, message, loc.file, loc.line, loc.col, **kwargs)

    @property
    def location(self) -> Location:
        return Location(self.file, self.line, self.col)

    def format(self) -> str:
        """The compiler-style one-line form (plus the hint, if any)."""
        where = str(self.location) if self.file else "toolctl"
        text = f"{where}: {self.severity.value} {self.code} {self.message}"
        if self.hint:
            text += f" (hint: {self.hint})"
        return text

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field (``extra`` only when not empty, copied one level
        deep). Written out rather than ``dataclasses.asdict``, which copies recursively and was
        most of the cost of remembering a large registry's lint findings."""
        data: dict[str, Any] = {
            "severity": self.severity.value,
            "code": self.code,
            "message": self.message,
            "file": self.file,
            "line": self.line,
            "col": self.col,
            "pointer": self.pointer,
            "hint": self.hint,
            "tool": self.tool,
        }
        if self.extra:
            data["extra"] = {
                k: v.copy() if isinstance(v, dict | list) else v for k, v in self.extra.items()
            }
        return data

    @classmethod
    def from_dict(cls, data: Any) -> Diagnostic:
        """The diagnostic :meth:`to_dict` gave ``data`` for, read back from JSON that may have
        been damaged: TypeError, ValueError or KeyError when a field is missing or of a type
        that :meth:`to_dict` never writes."""
        hint, tool, extra = data["hint"], data["tool"], data.get("extra", {})
        if not isinstance(extra, dict):
            raise TypeError("extra is not a mapping")
        return cls(
            Severity(data["severity"]),
            _of(str, data["code"]),
            _of(str, data["message"]),
            _of(str, data["file"]),
            _of(int, data["line"]),
            _of(int, data["col"]),
            _of(str, data["pointer"]),
            None if hint is None else _of(str, hint),
            None if tool is None else _of(str, tool),
            extra,
        )


def _of(kind: type[_T], value: Any) -> _T:
    """``value`` when it is exactly a ``kind`` (not a bool for an int); TypeError otherwise."""
    if type(value) is not kind:
        raise TypeError(f"not a {kind.__name__}: {value!r}")
    return value


def error(loc: Location | None, code: str, message: str, **kwargs: Any) -> Diagnostic:
    """Shorthand for an error-severity :class:`Diagnostic`."""
    return Diagnostic.at(loc, Severity.ERROR, code, message, **kwargs)


def warning(loc: Location | None, code: str, message: str, **kwargs: Any) -> Diagnostic:
    """Shorthand for a warning-severity :class:`Diagnostic`."""
    return Diagnostic.at(loc, Severity.WARNING, code, message, **kwargs)


def sort_key(d: Diagnostic) -> tuple[str, int, int, str, str]:
    return (d.file, d.line, d.col, d.code, d.message)


def sorted_unique(diags: Iterable[Diagnostic]) -> list[Diagnostic]:
    """Diagnostics in file/line/col order with exact duplicates removed."""
    seen: set[tuple[Any, ...]] = set()
    out: list[Diagnostic] = []
    for d in sorted(diags, key=sort_key):
        key = (d.severity, d.code, d.message, d.file, d.line, d.col, d.pointer)
        if key not in seen:
            seen.add(key)
            out.append(d)
    return out


def has_errors(diags: Iterable[Diagnostic]) -> bool:
    """True when any diagnostic is an error."""
    return any(d.severity is Severity.ERROR for d in diags)
