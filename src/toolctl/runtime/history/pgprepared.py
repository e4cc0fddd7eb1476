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

:meth:`PreparedWrites.execute_many` sends several writes (the history writer's batch) in one
transaction as one pipeline: ``BEGIN``, each statement, ``COMMIT`` and a single ``Sync``, one
round trip for them all.
"""

from __future__ import annotations

import contextlib
import threading
import weakref
from collections.abc import Sequence
from typing import Any

TUPLES_OK = 2  # pq.ExecStatus.TUPLES_OK and COMMAND_OK (1): what a write may answer
COMMAND_OK = 1
FATAL_ERROR = 7  # pq.ExecStatus.FATAL_ERROR
IN_ERROR = 3  # pq.TransactionStatus.INERROR: a failed transaction block, until ROLLBACK
_BEGIN, _COMMIT, _ROLLBACK = b"BEGIN", b"COMMIT", b"ROLLBACK"
_DURABLE = b"SET LOCAL synchronous_commit = on"


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
        values = _values(params)
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

    def execute_many(
        self, conn: Any, statements: Sequence[tuple[str, Sequence[Any]]], *, durable: bool
    ) -> list[int | Exception]:
        """Run the write statements in one transaction, sent as one pipeline (one round trip):
        ``BEGIN``, each statement, ``COMMIT``, one ``Sync``. For each statement, its row count
        or the error it alone failed with: a failed statement aborts the transaction, so the
        others (undone, their answers unseen by anyone) are sent once more without it, after a
        ``ROLLBACK`` in the same round trip. Raises when the transaction itself fails (its
        ``BEGIN`` or ``COMMIT``, the connection): then nothing of it is written. ``durable``:
        the commit waits for the server's disk."""
        from psycopg import errors

        outcomes: list[int | Exception | None] = [None] * len(statements)
        sending: list[tuple[int, bytes, str, list[bytes | None]]] = []
        for index, (sql, params) in enumerate(statements):
            try:
                values = _values(params)
            except Exception as exc:  # a value PostgreSQL cannot hold: this write only
                outcomes[index] = exc
                continue
            sending.append((index, self._name(sql), sql, values))
        with conn.lock:
            try:
                self._pipelines(conn, sending, outcomes, durable, errors)
            except BaseException:
                conn.close()  # mid-pipeline: the pool replaces it rather than reuse it
                raise
        return [0 if outcome is None else outcome for outcome in outcomes]

    def _pipelines(
        self,
        conn: Any,
        sending: list[tuple[int, bytes, str, list[bytes | None]]],
        outcomes: list[int | Exception | None],
        durable: bool,
        errors: Any,
    ) -> None:
        """Send ``sending`` until it commits, each failed statement taken out with its error
        left in ``outcomes`` (the others' row counts there on commit)."""
        prepared_again = False
        while sending:
            ready = self._ready_set(conn)
            for _, name, sql, _ in sending:
                if name not in ready:
                    self._prepare(conn, name, sql, ready, errors)
            results = _pipeline(conn, [(name, values) for _, name, _, values in sending], durable)
            failed = next((i for i, r in enumerate(results) if r.status == FATAL_ERROR), None)
            if failed is None:
                for (index, *_), result in zip(sending, results, strict=True):
                    outcomes[index] = int(result.command_tuples or 0)
                return
            error = errors.error_from_result(results[failed], encoding=conn.info.encoding)
            if isinstance(error, errors.InvalidSqlStatementName) and not prepared_again:
                # The session lost its statements (see execute): end the failed transaction
                # (a statement cannot be prepared in it), prepare them again, send once more.
                conn.wait(_roundtrip(conn.pgconn, _ROLLBACK))
                ready.clear()
                prepared_again = True
                continue
            outcomes[sending[failed][0]] = error
            del sending[failed]
        if conn.pgconn.transaction_status == IN_ERROR:  # every statement failed
            conn.wait(_roundtrip(conn.pgconn, _ROLLBACK))

    def _name(self, sql: str) -> bytes:
        name = self._names.get(sql)
        if name is None:
            with self._lock:
                name = self._names.setdefault(sql, f"toolctl_w{len(self._names) + 1}".encode())
        return name

    def _ready_set(self, conn: Any) -> set[bytes]:
        """The statements ``conn`` has prepared."""
        ready = self._ready.get(conn)
        if ready is None:
            ready = self._ready.setdefault(conn, set())
        return ready

    @staticmethod
    def _prepare(conn: Any, name: bytes, sql: str, ready: set[bytes], errors: Any) -> None:
        from psycopg import generators

        pgconn = conn.pgconn
        pgconn.send_prepare(name, numbered(sql).encode("utf-8"))
        # (a pooler's server session may have it already: then it is used)
        with contextlib.suppress(errors.DuplicatePreparedStatement):
            _check(conn, conn.wait(generators.execute(pgconn)), errors)
        ready.add(name)

    def _send(self, conn: Any, name: bytes, sql: str, values: list[bytes | None]) -> int:
        from psycopg import errors, generators

        pgconn = conn.pgconn
        with conn.lock:
            ready = self._ready_set(conn)
            if name not in ready:
                self._prepare(conn, name, sql, ready, errors)
            pgconn.send_query_prepared(name, values)
            result = _check(conn, conn.wait(generators.execute(pgconn)), errors)
        return int(result.command_tuples or 0)


def _values(params: Sequence[Any]) -> list[bytes | None]:
    """``params`` in PostgreSQL's text form (most are text or NULL: those without a call)."""
    return [
        value.encode("utf-8")
        if type(value) is str and "\x00" not in value
        else None
        if value is None
        else text_param(value)
        for value in params
    ]


def _pipeline(
    conn: Any, statements: list[tuple[bytes, list[bytes | None]]], durable: bool
) -> list[Any]:
    """One round trip in pipeline mode: (``ROLLBACK``, after a failed attempt) ``BEGIN``,
    (``SET LOCAL synchronous_commit = on``), each prepared statement ``(name, values)``,
    ``COMMIT``, one ``Sync``; the statements' results (after a failed one, the rest are
    aborted and nothing is committed). Raises the error of a ``BEGIN`` or ``COMMIT`` that
    failed: the transaction's own."""
    from psycopg import errors

    pgconn = conn.pgconn
    head = [_BEGIN, _DURABLE] if durable else [_BEGIN]
    if pgconn.transaction_status == IN_ERROR:
        head.insert(0, _ROLLBACK)
    pgconn.enter_pipeline_mode()
    for command in head:
        pgconn.send_query_params(command, None)
    for name, values in statements:
        pgconn.send_query_prepared(name, values)
    pgconn.send_query_params(_COMMIT, None)
    pgconn.pipeline_sync()
    results: list[Any] = conn.wait(_exchange(pgconn, len(head) + len(statements) + 1))
    pgconn.exit_pipeline_mode()
    for result in (*results[: len(head)], results[-1]):
        if result.status == FATAL_ERROR:
            raise errors.error_from_result(result, encoding=conn.info.encoding)
    return results[len(head) : -1]


def _exchange(pgconn: Any, commands: int) -> Any:
    """psycopg's generator for a pipeline already queued: flush it, then read the last
    result of each of ``commands`` and the ``Sync``'s (one wait for the whole round trip)."""
    from psycopg import generators

    yield from generators.send(pgconn)
    results = []
    for _ in range(commands):
        results.append((yield from generators.fetch_many(pgconn))[-1])
    yield from generators.fetch_many(pgconn)  # the Sync
    return results


def _roundtrip(pgconn: Any, command: bytes) -> Any:
    """psycopg's generator for one parameterless ``command``."""
    from psycopg import generators

    pgconn.send_query_params(command, None)
    return (yield from generators.execute(pgconn))


def _check(conn: Any, results: list[Any], errors: Any) -> Any:
    result = results[-1]
    if result.status not in (COMMAND_OK, TUPLES_OK):
        raise errors.error_from_result(result, encoding=conn.info.encoding)
    return result
