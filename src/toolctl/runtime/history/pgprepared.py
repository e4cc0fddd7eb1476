"""The PostgreSQL store's hot writes (a run's insert and its updates) as libpq prepared
statements with text parameters.

Through a psycopg cursor, a write cost more CPU in this process than the write itself costs
PostgreSQL: the query's conversion, a dumper looked up and called for each of the run row's 33
parameters, the prepared-statement bookkeeping, the result's row description. Here each
statement is prepared once per connection (on its first use there: one extra round trip), and
each write sends the statement's name and its parameters as text (the server parses them by
the column's type) and waits with psycopg's own generators, so a write stays interruptible
and a broken connection is detected as for any other statement. Only the store's own
statements come here: their parameters are text, numbers, booleans, None and lists of text.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Sequence
from typing import Any

TUPLES_OK = 2  # pq.ExecStatus.TUPLES_OK and COMMAND_OK (1): what a write may answer
COMMAND_OK = 1


def numbered(sql: str) -> str:
    """``sql`` with psycopg's ``%s`` placeholders as PostgreSQL's ``$1``, ``$2`` ... (the
    store's write statements hold no other ``%``)."""
    parts = sql.split("%s")
    if any("%" in part for part in parts):
        raise ValueError(f"not a plain %s statement: {sql!r}")
    return "".join(
        part + (f"${i}" if i < len(parts) else "") for i, part in enumerate(parts, start=1)
    )


def _array(items: Sequence[Any]) -> bytes:
    """A PostgreSQL array literal of text items (``status = ANY(...)``)."""
    quoted = ('"' + str(i).replace("\\", "\\\\").replace('"', '\\"') + '"' for i in items)
    return ("{" + ",".join(quoted) + "}").encode("utf-8")


def text_param(value: Any) -> bytes | None:
    """One parameter in PostgreSQL's text form (None: SQL NULL)."""
    if value is None:
        return None
    kind = type(value)
    if kind is str:
        text: str = value
        if "\x00" in text:
            import psycopg

            # what psycopg's own dumper says (libpq would cut the text at the NUL)
            raise psycopg.DataError("PostgreSQL text fields cannot contain NUL (0x00) bytes")
        return text.encode("utf-8")
    if kind is bool:
        return b"t" if value else b"f"
    if kind is int or kind is float:
        return repr(value).encode("ascii")
    if kind is list or kind is tuple:
        return _array(value)
    raise TypeError(f"unexpected {kind.__name__} parameter for a run-history write")


class PreparedWrites:
    """One store's write statements: the name of each (in order of first use), and which
    connection has prepared which (a reconnection is a new connection object: it prepares
    again)."""

    def __init__(self) -> None:
        self._names: dict[str, bytes] = {}
        self._lock = threading.Lock()
        self._ready: weakref.WeakKeyDictionary[Any, set[bytes]] = weakref.WeakKeyDictionary()

    def execute(self, conn: Any, sql: str, params: Sequence[Any]) -> int:
        """Run the write ``sql`` (``%s`` placeholders) with ``params`` on ``conn`` (a psycopg
        connection in autocommit mode, held by this thread); the number of rows it changed.
        Raises psycopg's error for the server's answer, as a cursor would."""
        # (most values are text or NULL: those without a call each)
        values = [
            value.encode("utf-8")
            if type(value) is str and "\x00" not in value
            else None
            if value is None
            else text_param(value)
            for value in params
        ]
        name = self._name(sql)
        try:
            return self._send(conn, name, sql, values)
        except Exception as exc:
            import psycopg

            # The statement is gone from the session (a pooler in front of PostgreSQL,
            # DISCARD ALL): nothing ran, so prepare it again and send it once more.
            if not isinstance(exc, psycopg.errors.InvalidSqlStatementName):
                raise
            self._ready.get(conn, set()).discard(name)
            return self._send(conn, name, sql, values)

    def _name(self, sql: str) -> bytes:
        name = self._names.get(sql)
        if name is None:
            with self._lock:
                name = self._names.setdefault(sql, f"toolctl_w{len(self._names) + 1}".encode())
        return name

    def _send(self, conn: Any, name: bytes, sql: str, values: list[bytes | None]) -> int:
        from psycopg import errors, generators

        pgconn = conn.pgconn
        with conn.lock:
            ready = self._ready.get(conn)
            if ready is None:
                ready = self._ready.setdefault(conn, set())
            if name not in ready:
                pgconn.send_prepare(name, numbered(sql).encode("utf-8"))
                # (a pooler's server session may have it already: then it is used)
                with contextlib.suppress(errors.DuplicatePreparedStatement):
                    _check(conn, conn.wait(generators.execute(pgconn)), errors)
                ready.add(name)
            pgconn.send_query_prepared(name, values)
            result = _check(conn, conn.wait(generators.execute(pgconn)), errors)
        return int(result.command_tuples or 0)


def _check(conn: Any, results: list[Any], errors: Any) -> Any:
    result = results[-1]
    if result.status not in (COMMAND_OK, TUPLES_OK):
        raise errors.error_from_result(result, encoding=conn.info.encoding)
    return result
