"""The run history in PostgreSQL: the same :class:`~toolctl.runtime.history.records.RunStore`
contract as
the SQLite store, shared by many processes on many machines (``toolctl serve`` replicas,
``toolctl worker`` processes).

* psycopg 3 with a connection pool (``psycopg_pool``), imported only when a ``postgresql://``
  state URL is used (the ``postgres`` extra: :func:`toolctl.install.install_hint`).
* Every state change is one ``UPDATE ... WHERE run_id = … AND status = … [AND owner IS NOT
  DISTINCT FROM …]`` statement in its own transaction: a compare-and-set that PostgreSQL's row
  lock makes exact across any number of writers, so a claim (approve, decline, resume, cancel, a
  worker taking a run) happens once.
* Durability follows the SQLite store: ``durable`` writes (entering a pending state, claims)
  commit with ``synchronous_commit = on``; other writes with ``off`` (the server may lose the last
  few commits on a crash of PostgreSQL itself, never corrupt anything).
* Schema versions live in ``toolctl_schema``; set-up and migrations run under an advisory lock,
  so replicas starting together migrate once. A newer schema is refused.
* JSON columns are ``text`` holding the JSON the SQLite store writes (``jsonb`` would refuse
  ``\\u0000`` in a tool's output and reorder keys).
* The URL's password never appears in an error or a log: :func:`display_url` masks it.
"""

from __future__ import annotations

import threading
import time
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import urlsplit, urlunsplit

from toolctl.install import install_hint
from toolctl.runtime.errors import DatabaseUnavailableError, RunNotFoundError, StateError
from toolctl.runtime.history import codec as rowcodec
from toolctl.runtime.history import pgprepared
from toolctl.runtime.history.capabilities import Capabilities
from toolctl.runtime.history.codec import FIELDS
from toolctl.runtime.history.records import RowWrite, RunRecord, ambiguous_prefix, check_changes

if TYPE_CHECKING:
    from collections.abc import Callable, Mapping, Sequence

    from procrastinate import App
    from psycopg_pool import ConnectionPool
    from typing_extensions import Unpack

    from toolctl.runtime.history.records import RowChanges

T = TypeVar("T")

SCHEMA_VERSION = 5
PING_WAIT_S = 2.0  # a readiness probe's wait for a connection
_LOCK_KEY = 7_415_321_907  # pg_advisory_xact_lock key for set-up and migrations
_SWEEP_KEY = 7_415_321_908  # pg_try_advisory_lock key: one periodic sweep at a time

_KEYS_TABLE = (
    "CREATE TABLE IF NOT EXISTS toolctl_keys (name TEXT PRIMARY KEY, secret BYTEA NOT NULL)"
)
_DDL = f"""
CREATE TABLE IF NOT EXISTS toolctl_schema (version INTEGER NOT NULL);
{rowcodec.create_table("toolctl_runs", postgres=True)};
{_KEYS_TABLE};
CREATE INDEX IF NOT EXISTS toolctl_runs_status ON toolctl_runs(status);
CREATE INDEX IF NOT EXISTS toolctl_runs_tool ON toolctl_runs(tool, created_at);
CREATE INDEX IF NOT EXISTS toolctl_runs_created ON toolctl_runs(created_at);
"""

_INSERT = f"INSERT INTO toolctl_runs ({','.join(FIELDS)}) VALUES ({','.join(['%s'] * len(FIELDS))})"

# Each step takes the schema from version N (its index + 1) to N + 1.
_MIGRATIONS: tuple[tuple[str, ...], ...] = (
    # 2: the MAC binding a pending run's data, a failed handler's traceback, the binding secret
    (
        "ALTER TABLE toolctl_runs ADD COLUMN binding TEXT",
        "ALTER TABLE toolctl_runs ADD COLUMN traceback TEXT",
        _KEYS_TABLE,
    ),
    # 3: the front end that started a run (older rows: NULL, never an MCP client's)
    ("ALTER TABLE toolctl_runs ADD COLUMN origin TEXT",),
    # 4: who started a run over MCP (a verified token's iss/sub/client_id; older rows: NULL)
    ("ALTER TABLE toolctl_runs ADD COLUMN principal TEXT",),
    # 5: the answers a background run was given before it was queued (inputRequests)
    ("ALTER TABLE toolctl_runs ADD COLUMN raw_resume TEXT",),
)


INSTALL_HINT = f"install the postgres extra: {install_hint('postgres')}"

# The run history's connection pool in each process (replica, worker, CLI command):
# TOOLCTL_STATE_POOL_MIN connections kept open, at most TOOLCTL_STATE_POOL_MAX. Every other
# connection a process may open is sized from these (docs/deployment.md counts them).
POOL_MIN_ENV, POOL_MAX_ENV = "TOOLCTL_STATE_POOL_MIN", "TOOLCTL_STATE_POOL_MAX"
POOL_MIN, POOL_MAX = 1, 8
# How long a statement waits for a pooled connection (and a new connection for the server)
# before the store reports the database unavailable.
POOL_TIMEOUT_ENV, POOL_TIMEOUT = "TOOLCTL_STATE_POOL_TIMEOUT", 10.0
# How long a pool keeps retrying one lost or refused connection before it gives up on it (the
# next caller that needs one then connects at once). psycopg_pool doubles the delay between
# attempts until its default of 5 minutes, so after a long outage or a full connection table
# its next attempt could come a minute after the database was back, and every caller waited.
RECONNECT_S = 2.0
# A statement waits for a connection in slices of this many seconds: psycopg_pool starts a new
# connection attempt only when a caller asks, so one that asked during an outage, once that
# attempt has given up (RECONNECT_S), would wait out its whole timeout even with the database
# back; asking again each slice reconnects within a second or so of its return.
WAIT_SLICE_S = RECONNECT_S + 1.0
QUEUE_POOL_MAX = 4  # the enqueuing side's task-queue pool: at most this many (or the max above)


def pool_sizes(environ: Mapping[str, str]) -> tuple[int, int]:
    """``(min, max)`` of the run history's pool from ``environ``; a :class:`StateError` naming
    the variable when a value is not a whole number or min > max."""
    sizes = []
    for name, default, least in ((POOL_MIN_ENV, POOL_MIN, 0), (POOL_MAX_ENV, POOL_MAX, 1)):
        raw = environ.get(name, "").strip()
        try:
            value = int(raw) if raw else default
        except ValueError:
            value = -1
        if value < least:
            raise StateError(
                f"{name}={raw!r} is not a number of connections",
                hint=f"set {name} to a whole number of at least {least}, or unset it "
                f"(default {default})",
            )
        sizes.append(value)
    low, high = sizes
    if low > high:
        raise StateError(
            f"{POOL_MIN_ENV}={low} is more than {POOL_MAX_ENV}={high}",
            hint=f"set {POOL_MIN_ENV} at most {POOL_MAX_ENV}",
        )
    return low, high


def pool_timeout(environ: Mapping[str, str]) -> float:
    """Seconds a statement waits for a connection, from ``environ``; a :class:`StateError`
    naming the variable when the value is not a number of at least 1."""
    raw = environ.get(POOL_TIMEOUT_ENV, "").strip()
    if not raw:
        return POOL_TIMEOUT
    try:
        value = float(raw)
    except ValueError:
        value = 0.0
    if not 1.0 <= value < float("inf"):
        raise StateError(
            f"{POOL_TIMEOUT_ENV}={raw!r} is not a number of seconds",
            hint=f"set {POOL_TIMEOUT_ENV} to a number of seconds of at least 1, or unset it "
            f"(default {POOL_TIMEOUT:g})",
        )
    return value


def display_url(url: str) -> str:
    """``url`` with its password (and any ``password=`` query parameter) masked."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return "postgresql://***"
    netloc = parts.netloc
    if "@" in netloc:
        creds, host = netloc.rsplit("@", 1)
        user = creds.split(":", 1)[0]
        netloc = f"{user}:***@{host}" if ":" in creds else f"{user}@{host}"
    query = "&".join(
        "password=***" if item.lower().startswith("password=") else item
        for item in parts.query.split("&")
        if item
    )
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


def _secret_of(url: str) -> str | None:
    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    if parts.password:
        return parts.password
    for item in parts.query.split("&"):
        if item.lower().startswith("password="):
            return item.split("=", 1)[1]
    return None


def _insert_args(record: RunRecord) -> list[Any]:
    """The parameters of :data:`_INSERT` for ``record``."""
    return rowcodec.record_values(record, booleans=True)


def _statement(write: RowWrite) -> tuple[str, list[Any]]:
    """The statement that makes ``write``, and its parameters."""
    if write.record is not None:
        return _INSERT, _insert_args(write.record)
    changes = write.changes or {}
    check_changes(changes)
    return _update_statement(write.run_id, changes, write.expect_status, write.expect_owner)


def _update_statement(
    run_id: str,
    changes: Mapping[str, Any],
    expect_status: str | tuple[str, ...] | None,
    expect_owner: str | None,
) -> tuple[str, list[Any]]:
    """The ``UPDATE`` that applies ``changes`` to run ``run_id`` if it is in ``expect_status``
    and owned by ``expect_owner`` (each None: any), and its parameters."""
    sets = ", ".join(f"{k} = %s" for k in changes)
    args = rowcodec.change_values(changes, booleans=True)
    clauses: list[str] = ["run_id = %s"]
    where_args: list[Any] = [run_id]
    if isinstance(expect_status, str):
        clauses.append("status = %s")
        where_args.append(expect_status)
    elif expect_status:
        clauses.append("status = ANY(%s)")
        where_args.append(list(expect_status))
    if expect_owner is not None:
        clauses.append("owner IS NOT DISTINCT FROM %s")
        where_args.append(expect_owner)
    sql = f"UPDATE toolctl_runs SET {sets} WHERE {' AND '.join(clauses)}"
    return sql, [*args, *where_args]


class PostgresStore:
    """The run history in a PostgreSQL database. Safe across threads, processes and machines."""

    def __init__(
        self,
        url: str,
        *,
        sweep: bool = True,
        min_size: int = POOL_MIN,
        max_size: int = POOL_MAX,
        connect_timeout: float = POOL_TIMEOUT,
    ) -> None:
        self.url = url
        self.where = display_url(url)  # what messages show: the URL, its password masked
        self._key: bytes | None = None
        self._secret = _secret_of(url)
        self._closed = threading.Event()
        self._queue_ready = False
        self._queue_lock = threading.Lock()
        self._queue_pool: ConnectionPool | None = None  # the task queue's, made on first use
        self._queue_app: App | None = None
        self._rate_ready = False  # toolctl_rate_limits made (on the first rate-limited call)
        self._rate_takes = 0
        self._writes = pgprepared.PreparedWrites()  # the run writes' prepared statements
        self.max_size = max_size
        self.capabilities = Capabilities.probe(self)
        self._pool = self._open_pool(min_size, max_size, connect_timeout)
        try:
            self._setup()
        except BaseException:
            self._pool.close()
            raise
        if sweep:
            self.sweep()

    # ------------------------------------------------------------ connection and errors

    def _open_pool(self, min_size: int, max_size: int, timeout: float) -> ConnectionPool:
        try:
            import psycopg
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise StateError(
                f"state {self.where} is a PostgreSQL URL, but psycopg is not installed",
                hint=INSTALL_HINT,
            ) from None
        connect = {"autocommit": True, "connect_timeout": max(1, int(timeout))}
        try:  # one direct connection first: the pool would retry and hide the cause
            psycopg.connect(self.url, **connect).close()  # type: ignore[arg-type]
        except psycopg.Error as exc:
            raise self._error(exc, "cannot connect to") from None
        pool = ConnectionPool(
            self.url,
            min_size=min_size,
            max_size=max_size,
            kwargs=connect,
            timeout=timeout,
            open=False,
            name="toolctl-state",
            configure=self._configure,
            reconnect_timeout=RECONNECT_S,
        )
        try:
            pool.open(wait=True, timeout=timeout)
        except Exception as exc:
            pool.close()
            raise self._error(exc, "cannot connect to") from None
        return pool

    def _clean(self, text: str) -> str:
        if self._secret:
            text = text.replace(self._secret, "***")
        return text.replace(self.url, self.where)

    def _error(self, exc: BaseException, doing: str) -> StateError:
        detail = self._clean(str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc))
        return StateError(
            f"{doing} run history {self.where}: {detail}",
            hint="check that the server is up and the URL, user and database are right "
            "(the password comes from the URL or TOOLCTL_STATE)",
        )

    def _unavailable(self, exc: BaseException) -> DatabaseUnavailableError:
        detail = self._clean(str(exc).strip().splitlines()[0] if str(exc).strip() else repr(exc))
        return DatabaseUnavailableError(
            f"database unavailable: cannot use run history {self.where}: {detail}",
            hint="the PostgreSQL server is stopped, restarting or out of connections; "
            "retry in a moment",
        )

    def _run(
        self,
        sql: str,
        args: Any = None,
        *,
        durable: bool = True,
        fetch: bool = False,
        wait: float | None = None,
        prepared: bool = False,
    ) -> Any:
        """One statement, its own transaction; its rows (``fetch``) or its row count.

        Connections default to ``synchronous_commit = off`` (see :meth:`_configure`), so an
        ordinary write is one round trip; a ``durable`` one commits synchronously (its
        ``BEGIN``, ``SET LOCAL``, statement and ``COMMIT`` sent as one pipeline: one round
        trip too). ``prepared``: a hot write (a run's insert or update), sent as a libpq
        prepared statement (:mod:`toolctl.runtime.history.pgprepared`) unless it is durable.

        A statement that fails because its pooled connection was broken (the server restarted
        since the connection was opened) is sent once more on a checked connection: it never
        reached the server, and every write is a compare-and-set, so sending it again cannot
        apply it twice. Any other error (a constraint, a bad statement) is not retried.
        ``wait``: how long to wait for a connection (default: the pool's timeout).
        """
        if prepared and not durable:
            return self._on_connection(lambda conn: self._writes.execute(conn, sql, args), wait)
        return self._on_connection(
            lambda conn: self._execute(conn, sql, args, durable=durable, fetch=fetch), wait
        )

    def _on_connection(self, use: Callable[[Any], T], wait: float | None = None) -> T:
        """``use(conn)`` on a pooled connection, sent once more on a checked connection if
        the first was broken, errors mapped (see :meth:`_run`)."""
        import psycopg

        for attempt in (1, 2):
            broken = False
            try:
                # getconn/putconn rather than connection(): its ``with conn`` block would only
                # commit or roll back nothing (autocommit), through the connection's lock
                conn = self._getconn(wait)
                try:
                    return use(conn)
                except psycopg.OperationalError:
                    broken = conn.broken or conn.closed
                    raise
                finally:
                    self._pool.putconn(conn)  # a broken one is replaced, not reused
            except psycopg.OperationalError as exc:
                if broken and attempt == 1:
                    self._pool.check()  # drop every other stale connection before the retry
                    continue
                raise self._unavailable(exc) from None
            except psycopg.Error as exc:
                raise self._error(exc, "cannot use") from None
            except Exception as exc:  # the pool's PoolTimeout and friends: no connection to be had
                if type(exc).__module__.startswith("psycopg"):
                    raise self._unavailable(exc) from None
                raise
        raise AssertionError("unreachable")  # pragma: no cover

    def _getconn(self, wait: float | None) -> Any:
        """A pooled connection, waiting at most ``wait`` seconds (default: the pool's
        timeout) in slices of :data:`WAIT_SLICE_S`."""
        from psycopg_pool import PoolTimeout

        total = self._pool.timeout if wait is None else wait
        deadline = time.monotonic() + total
        while True:
            left = deadline - time.monotonic()
            try:
                return self._pool.getconn(timeout=max(min(left, WAIT_SLICE_S), 0.001))
            except PoolTimeout:
                if left <= WAIT_SLICE_S:
                    raise PoolTimeout(f"couldn't get a connection after {total:.2f} sec") from None

    @staticmethod
    def _execute(conn: Any, sql: str, args: Any, *, durable: bool, fetch: bool) -> Any:
        from psycopg.rows import dict_row

        with conn.cursor(row_factory=dict_row) as cur:
            if durable and not fetch:
                with conn.pipeline(), conn.transaction():
                    cur.execute("SET LOCAL synchronous_commit = on")
                    cur.execute(sql, args)
            else:
                cur.execute(sql, args)
            return cur.fetchall() if fetch else cur.rowcount

    @staticmethod
    def _configure(conn: Any) -> None:
        # Ordinary writes may be lost if PostgreSQL itself crashes (never corrupted), as with
        # SQLite's synchronous=NORMAL; durable ones set it back on for their transaction.
        conn.execute("SET synchronous_commit = off")

    def _setup(self) -> None:
        import psycopg

        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                exists = conn.execute("SELECT to_regclass('toolctl_schema')").fetchone()
                version = 0
                if exists and exists[0] is not None:
                    row = conn.execute("SELECT max(version) FROM toolctl_schema").fetchone()
                    version = int(row[0]) if row and row[0] is not None else 0
                if version > SCHEMA_VERSION:
                    raise StateError(
                        f"run history {self.where} has schema version {version}; this toolctl "
                        f"reads version {SCHEMA_VERSION}",
                        hint="upgrade toolctl on every replica and worker, or use another database",
                    )
                if version == 0:
                    for statement in _DDL.split(";"):
                        if statement.strip():
                            conn.execute(statement)
                else:
                    for step in _MIGRATIONS[version - 1 :]:
                        for statement in step:
                            conn.execute(statement)
                if version < SCHEMA_VERSION:
                    conn.execute("DELETE FROM toolctl_schema")
                    conn.execute("INSERT INTO toolctl_schema VALUES (%s)", (SCHEMA_VERSION,))
        except psycopg.Error as exc:
            raise self._error(exc, "cannot set up") from None

    def close(self) -> None:
        if not self._closed.is_set():
            self._closed.set()
            from toolctl.runtime.history import heartbeat

            heartbeat.stop_renewing(self)
            if self._queue_pool is not None:
                self._queue_pool.close()
            self._pool.close()

    @property
    def closed(self) -> bool:
        """True once :meth:`close` ran (the lease heartbeat stops renewing its runs)."""
        return self._closed.is_set()

    # ------------------------------------------------------------ the RunStore protocol

    def insert(self, record: RunRecord, *, durable: bool = False) -> None:
        """Add a run; ``durable`` commits synchronously (a run inserted in a pending state)."""
        self._run(_INSERT, _insert_args(record), durable=durable, prepared=True)

    def update(
        self,
        run_id: str,
        *,
        expect_status: str | tuple[str, ...] | None = None,
        expect_owner: str | None = None,
        durable: bool = False,
        **changes: Unpack[RowChanges],
    ) -> bool:
        """Apply ``changes`` if the run is (still) in ``expect_status`` / owned by
        ``expect_owner``; False when another writer got there first (compare-and-set).
        Status changes come from the run ledger (:mod:`toolctl.runtime.history.ledger`) only."""
        check_changes(changes)
        sql, args = _update_statement(run_id, changes, expect_status, expect_owner)
        return int(self._run(sql, args, durable=durable, prepared=True)) == 1

    def write_many(self, writes: Sequence[RowWrite]) -> list[bool | Exception]:
        """Make ``writes`` in one transaction sent as one round trip (the history writer's
        batch: :mod:`toolctl.runtime.history.writer`); for each, what
        :func:`~toolctl.runtime.history.ledger.apply` returns or the error it alone failed
        with. Raises when the transaction failed as a whole (the database unavailable, its
        commit refused): then none is written. A lone write is sent as :meth:`insert` or
        :meth:`update` sends it."""
        outcomes: list[bool | Exception] = []
        statements: list[tuple[str, Sequence[Any]]] = []
        sent: list[int] = []  # the index of each statement's write
        for index, write in enumerate(writes):
            try:
                statements.append(_statement(write))
            except (ValueError, TypeError) as exc:  # a row this store cannot hold: it alone
                outcomes.append(exc)
                continue
            outcomes.append(False)
            sent.append(index)
        durable = any(write.durable for write in writes)
        if len(statements) == 1:  # alone: one statement, as insert() or update() sends it
            sql, args = statements[0]
            counts: list[int | Exception] = [self._run(sql, args, durable=durable, prepared=True)]
        elif statements:
            counts = self._on_connection(
                lambda conn: self._writes.execute_many(conn, statements, durable=durable)
            )
        else:
            counts = []
        for index, count in zip(sent, counts, strict=True):
            outcomes[index] = (
                self._mapped(count)
                if isinstance(count, Exception)
                else writes[index].record is not None or count == 1
            )
        return outcomes

    def _mapped(self, exc: Exception) -> Exception:
        """The error one statement failed with, as :meth:`_run` would raise it."""
        import psycopg

        if isinstance(exc, psycopg.OperationalError):
            return self._unavailable(exc)
        return self._error(exc, "cannot use") if isinstance(exc, psycopg.Error) else exc

    def get(self, run_id: str) -> RunRecord:
        """The run with this id, or the only run whose id starts with it."""
        rows = self._run("SELECT * FROM toolctl_runs WHERE run_id = %s", (run_id,), fetch=True)
        if not rows and run_id:
            rows = self._run(
                "SELECT * FROM toolctl_runs WHERE run_id LIKE %s ESCAPE '\\' LIMIT 2",
                (rowcodec.like_prefix(run_id),),
                fetch=True,
            )
            if len(rows) > 1:
                raise ambiguous_prefix(run_id)
        if not rows:
            raise RunNotFoundError(
                f"no run {run_id!r} in {self.where}",
                hint="toolctl runs list shows the recorded runs",
            )
        return rowcodec.decode(rows[0])

    def query(
        self,
        *,
        tool: str | None = None,
        status: str | None = None,
        limit: int = 50,
        principal: str | None = None,
    ) -> list[RunRecord]:
        where, args = rowcodec.query_where(tool, status, "%s", principal)
        rows = self._run(
            f"SELECT * FROM toolctl_runs {where} ORDER BY created_at DESC, run_id DESC LIMIT %s",
            [*args, rowcodec.query_limit(limit)],
            fetch=True,
        )
        return [rowcodec.decode(r) for r in rows]

    def running(self) -> list[RunRecord]:
        """Every run now ``running`` (on every machine sharing the database)."""
        rows = self._run("SELECT * FROM toolctl_runs WHERE status = 'running'", fetch=True)
        return [rowcodec.decode(r) for r in rows]

    def sweep(self) -> list[str]:
        """End the runs whose owner died (:func:`toolctl.runtime.history.ledger.sweep`): marked
        ``interrupted``, except a background run of an idempotent tool, which goes back on the
        queue, and a run waiting in the queue, which is checked against its job."""
        from toolctl.runtime.history import ledger

        return ledger.sweep(self)

    def sweep_exclusive(self, then: Callable[[], object] | None = None) -> list[str] | None:
        """:meth:`sweep`, unless another process on this database is sweeping right now (then
        None): the periodic sweeps of every replica and worker take turns instead of all
        reading every running run. The turn is a session advisory lock on a connection of its
        own, so it ends with the sweep, or with the process if it dies mid-sweep. ``then``
        runs after the sweep, still in the turn (the queue's housekeeping)."""
        import psycopg

        try:
            with psycopg.connect(self.url, autocommit=True, connect_timeout=5) as conn:
                row = conn.execute("SELECT pg_try_advisory_lock(%s)", (_SWEEP_KEY,)).fetchone()
                if not row or not row[0]:
                    return None
                swept = self.sweep()
                if then is not None:
                    then()
                return swept
        except psycopg.OperationalError as exc:
            raise self._unavailable(exc) from None
        except psycopg.Error as exc:
            raise self._error(exc, "cannot sweep") from None

    def renew_leases(self, runs: Sequence[tuple[str, str, float]]) -> set[str]:
        """Extend the lease of each ``(run_id, owner, lease_s)`` still ``running`` under that
        owner to now + ``lease_s``, all in one statement (the lease heartbeat's, see
        :mod:`toolctl.runtime.history.heartbeat`); the ids renewed. A run missing from the answer
        was
        cancelled or taken as lost meanwhile."""
        if not runs:
            return set()
        ids, owners, leases = (list(column) for column in zip(*runs, strict=True))
        rows = self._run(
            "UPDATE toolctl_runs AS r SET lease_expires = %s + m.lease"
            " FROM unnest(%s::text[], %s::text[], %s::float8[]) AS m(run_id, owner, lease)"
            " WHERE r.run_id = m.run_id AND r.owner = m.owner AND r.status = 'running'"
            " RETURNING r.run_id",
            (time.time(), ids, owners, leases),
            fetch=True,
        )
        return {row["run_id"] for row in rows}

    def queue_app(self) -> App:
        """The task queue's Procrastinate app on this database, open on a small pool of its own
        (made on first use, closed with the store), so enqueueing a run reuses a connection
        instead of opening one. Its own pool: job inserts commit synchronously, while this
        store's connections default to ``synchronous_commit = off``."""
        with self._queue_lock:
            if self._queue_app is None:
                from psycopg_pool import ConnectionPool

                from toolctl.runtime.history.queue import make_app

                app = make_app(self.url)
                pool = ConnectionPool(  # opened when a run is enqueued, closed when idle
                    self.url,
                    min_size=0,
                    max_size=min(QUEUE_POOL_MAX, self.max_size),
                    open=False,
                    name="toolctl-queue",
                    check=ConnectionPool.check_connection,
                    timeout=self._pool.timeout,  # a connection waited for as the store's
                    reconnect_timeout=RECONNECT_S,
                )
                try:
                    pool.open(wait=True, timeout=10.0)
                except Exception as exc:
                    pool.close()
                    raise self._error(exc, "cannot connect the task queue to") from None
                app.open(pool)
                self._queue_pool, self._queue_app = pool, app
            return self._queue_app

    def queue_job_status(self, run_id: str, token: str) -> str | None:
        """The Procrastinate status of the newest job that would claim run ``run_id`` from
        ``token`` (``todo``, ``doing``, ``failed`` ...); None when there is none (finished jobs
        are deleted, so a job that vanished)."""
        from toolctl.runtime.history.queue import TASK

        rows = self._run(
            "SELECT status::text AS status FROM procrastinate_jobs WHERE task_name = %s"
            " AND args->>'run_id' = %s AND args->>'token' = %s ORDER BY id DESC LIMIT 1",
            (TASK, run_id, token),
            fetch=True,
        )
        return str(rows[0]["status"]) if rows else None

    def queue_exists(self) -> bool:
        """Whether the task queue's tables exist (a background run was ever queued here)."""
        rows = self._run("SELECT to_regclass('procrastinate_jobs') AS t", fetch=True)
        return bool(rows and rows[0]["t"] is not None)

    def ensure_queue_schema(self) -> None:
        """Create the task queue's tables (Procrastinate's schema) once per database."""
        if self._queue_ready:
            return
        import psycopg
        from procrastinate.schema import SchemaManager

        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                found = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()
                if found is None or found[0] is None:
                    conn.execute(SchemaManager.get_schema())
        except psycopg.Error as exc:
            raise self._error(exc, "cannot set up the task queue in") from None
        self._queue_ready = True

    @property
    def path(self) -> None:
        """No database file (background runs go to the task queue instead)."""
        return None

    def binding_key(self) -> bytes:
        """The secret of :mod:`toolctl.runtime.history.binding`, shared by every process on this
        database: ``TOOLCTL_STATE_KEY`` (64 hex digits) when set, else one random row of
        ``toolctl_keys`` created on first use (grant that table only to the roles that approve
        and run tools)."""
        if self._key is None:
            self._key = self._load_key()
        return self._key

    def _load_key(self) -> bytes:
        import secrets

        from toolctl.runtime.history.binding import configured_key

        configured = configured_key()
        if configured is not None:
            return configured
        self._run(
            "INSERT INTO toolctl_keys VALUES ('binding', %s) ON CONFLICT (name) DO NOTHING",
            (secrets.token_bytes(32),),
        )
        rows = self._run("SELECT secret FROM toolctl_keys WHERE name = 'binding'", fetch=True)
        return bytes(rows[0]["secret"])

    def ping(self) -> None:
        """Raise :class:`DatabaseUnavailableError` unless the database answers within a few
        seconds (readiness checks: a balancer's probe must not hang while the server is down)."""
        self._run("SELECT 1", fetch=True, wait=PING_WAIT_S)

    # ------------------------------------------------------------ rate limits

    def take_call(self, bucket: str, per_minute: int) -> float:
        """Take one call from a rate-limit bucket shared by every process on this database:
        0.0 when allowed, else seconds until one is free
        (:mod:`toolctl.runtime.ratelimit`)."""
        from toolctl.runtime import ratelimit

        self._ensure_rate_table()
        rows = self._run(
            ratelimit.PG_TAKE, ratelimit.pg_params(bucket, per_minute), durable=False, fetch=True
        )
        self._rate_takes += 1
        if self._rate_takes % ratelimit.PG_CLEAN_EVERY == 0:
            self._run(ratelimit.PG_DRAINED, durable=False)
        return ratelimit.pg_wait(rows[0], per_minute)

    def _ensure_rate_table(self) -> None:
        # Made on first use, not by a schema migration: a database that never limits a tool
        # never gets the table, and an older toolctl on the same database ignores it.
        if self._rate_ready:
            return
        import psycopg

        from toolctl.runtime.ratelimit import PG_TABLE

        try:
            with self._pool.connection() as conn, conn.transaction():
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (_LOCK_KEY,))
                conn.execute(PG_TABLE)
        except psycopg.OperationalError as exc:
            raise self._unavailable(exc) from None
        except psycopg.Error as exc:
            raise self._error(exc, "cannot set up rate limits in") from None
        self._rate_ready = True
