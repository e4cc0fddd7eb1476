"""The run history: the SQLite state store (the embedded default), and opening it.

The row type and the store protocol are in :mod:`toolctl.runtime.history.records`, the in-memory
store
in :mod:`toolctl.runtime.history.memory` (both re-exported here).

SQLite rules (see reference/reliability.md §3.5): WAL journal; ``synchronous=NORMAL`` for
ordinary writes (WAL keeps the file consistent; a power loss, not a process crash, can drop the
last committed runs) and ``synchronous=FULL`` for the ``durable`` writes that must survive a
power loss (entering a pending state, the claim of approve/resume: losing one could lose a
pending run or run a handler twice); a busy timeout; ``isolation_level=None`` with explicit
``BEGIN IMMEDIATE`` (a deferred transaction that reads and then writes fails at once with
SQLITE_BUSY_SNAPSHOT under contention); every state change a compare-and-set
``UPDATE ... WHERE status = ?``; no transaction held while a tool runs; file mode 0600; a schema
version in ``PRAGMA user_version``, older histories upgraded in place. Rows store
transcript-transformed, redacted data (plus the model output and display views a caller
collecting a result needs); the raw input and request context are kept only while a run is
pending.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.runtime.errors import RunNotFoundError, StateError
from toolctl.runtime.history import checkpoint
from toolctl.runtime.history import codec as rowcodec
from toolctl.runtime.history.capabilities import Capabilities
from toolctl.runtime.history.codec import FIELDS
from toolctl.runtime.history.memory import MemoryStore as MemoryStore
from toolctl.runtime.history.ownership import DEFAULT_LEASE_S as DEFAULT_LEASE_S
from toolctl.runtime.history.ownership import owner_fields as owner_fields
from toolctl.runtime.history.records import HasProject, ambiguous_prefix, check_changes
from toolctl.runtime.history.records import RunRecord as RunRecord
from toolctl.runtime.history.records import RunStore as RunStore
from toolctl.yamlsrc import real_path

if TYPE_CHECKING:
    from typing_extensions import Unpack

    from toolctl.runtime.history.records import RowChanges

SCHEMA_VERSION = 6
BUSY_TIMEOUT_S = 5.0

_DDL = f"""
{rowcodec.create_table("runs")};
CREATE INDEX IF NOT EXISTS runs_status ON runs(status);
CREATE INDEX IF NOT EXISTS runs_tool ON runs(tool, created_at);
CREATE INDEX IF NOT EXISTS runs_created ON runs(created_at);
"""

# Each step takes a history from version N (its index + 1) to N + 1.
_MIGRATIONS = (
    # 2: the model output and display views of a run, for collecting a background result
    ("ALTER TABLE runs ADD COLUMN model_output TEXT", "ALTER TABLE runs ADD COLUMN display TEXT"),
    # 3: the MAC binding a pending run's data, and a failed handler's traceback
    ("ALTER TABLE runs ADD COLUMN binding TEXT", "ALTER TABLE runs ADD COLUMN traceback TEXT"),
    # 4: the front end that started a run (older rows: NULL, never an MCP client's)
    ("ALTER TABLE runs ADD COLUMN origin TEXT",),
    # 5: who started a run over MCP (a verified token's iss/sub/client_id; older rows: NULL)
    ("ALTER TABLE runs ADD COLUMN principal TEXT",),
    # 6: the answers a background run was given before it was queued (inputRequests)
    ("ALTER TABLE runs ADD COLUMN raw_resume TEXT",),
)


# ---------------------------------------------------------------- SQLite

_INSERT = f"INSERT INTO runs ({','.join(FIELDS)}) VALUES ({','.join('?' * len(FIELDS))})"


def _decode(row: sqlite3.Row) -> RunRecord:
    return rowcodec.decode(dict(zip(row.keys(), tuple(row), strict=True)))


def _text(raw: bytes) -> str:
    """TEXT columns as str; bytes that are not UTF-8 (a damaged page) are replaced, not fatal."""
    return raw.decode("utf-8", "replace")


# sqlite error name prefix -> (what happened, what to do); {path} and {parent} are filled in.
_ADVICE = (
    (
        ("SQLITE_CORRUPT",),
        "is damaged",
        "toolctl leaves it as it is: salvage its runs with `sqlite3 {path} .recover | sqlite3 "
        "{path}.recovered`, then point `state:` in toolctl.yaml (or --state) at the recovered file",
    ),
    (
        ("SQLITE_NOTADB",),
        "is not an SQLite run history",
        "point `state:` in toolctl.yaml (or --state) at another file; toolctl leaves this one",
    ),
    (
        ("SQLITE_FULL",),
        "cannot grow: the disk is full",
        "free space on the disk that holds it (`df {parent}`), or point `state:` in toolctl.yaml "
        "(or --state) at a disk with room; the runs already recorded are intact",
    ),
    (
        ("SQLITE_IOERR",),
        "could not be read or written (disk I/O error)",
        "check that the disk is not full (`df {parent}`) or failing and is mounted read-write, "
        "or point `state:` in toolctl.yaml (or --state) at another disk; the file is not changed",
    ),
    (
        ("SQLITE_READONLY",),
        "is read-only",
        "make the file and its directory writable (the -wal and -shm files go beside it; "
        "`lsattr {path}` shows an immutable flag), or point `state:` at a writable file",
    ),
    (
        ("SQLITE_CANTOPEN", "SQLITE_PERM", "SQLITE_AUTH"),
        "cannot be opened",
        "check the permissions of the file and of {parent}, or point `state:` elsewhere",
    ),
    (
        ("SQLITE_BUSY", "SQLITE_LOCKED"),
        f"stayed locked by another process for {BUSY_TIMEOUT_S:g} s",
        "retry when the other toolctl is done with it",
    ),
)


def state_error(path: Path, exc: sqlite3.Error, doing: str) -> StateError:
    """The :class:`StateError` for an SQLite failure on the history at ``path``: which file,
    what happened and what to do, never to delete the history."""
    name = getattr(exc, "sqlite_errorname", "") or ""
    for prefixes, what, todo in _ADVICE:
        if name.startswith(prefixes):
            hint = todo.format(path=path, parent=path.parent)
            return StateError(f"run history {path} {what} ({doing}: {exc})", hint=hint)
    return StateError(
        f"run history {path}: {doing} failed: {exc}",
        hint="point `state:` in toolctl.yaml (or --state) at another file to keep working; "
        "toolctl did not change this one",
    )


def _prepare_file(path: Path) -> None:
    parent = path.parent
    if not parent.is_dir():
        raise StateError(
            f"cannot open run history {path}: directory {parent} does not exist",
            hint="create it, or pass --state PATH (or set state in toolctl.yaml)",
        )
    if not os.access(parent, os.W_OK | os.X_OK):
        raise StateError(
            f"cannot open run history {path}: directory {parent} is not writable",
            hint="fix its permissions or pass --state PATH",
        )
    try:
        fd = os.open(path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600)
        os.close(fd)
    except FileExistsError:
        pass
    except OSError as exc:
        raise StateError(
            f"cannot create run history {path}: {exc.strerror}",
            hint="free space or fix the permissions there, or point `state:` in toolctl.yaml "
            "(or --state) at a writable place",
        ) from None


class SqliteStore:
    """The run history in one SQLite file. Safe across threads and processes."""

    def __init__(self, path: str | Path, *, sweep: bool = True) -> None:
        self.path = Path(path)
        self._key: bytes | None = None
        _prepare_file(self.path)
        self._lock = threading.RLock()
        self._batching = False  # inside batch(): writes join its transaction
        self._commits = 0  # a checkpoint is asked for every checkpoint.EVERY_COMMITS
        self.capabilities = Capabilities.probe(self)
        with self._mapped("opening it"):
            self._db = sqlite3.connect(
                str(self.path),
                timeout=BUSY_TIMEOUT_S,
                isolation_level=None,
                check_same_thread=False,
            )
            self._db.row_factory = sqlite3.Row
            self._db.text_factory = _text
            self._setup()
        if sweep:
            self.sweep()

    @contextlib.contextmanager
    def _mapped(self, doing: str) -> Iterator[None]:
        """SQLite failures as a :class:`StateError` naming the file and what to do."""
        try:
            yield
        except sqlite3.Error as exc:
            raise state_error(self.path, exc, doing) from None

    def _setup(self) -> None:
        db = self._db
        db.execute(f"PRAGMA busy_timeout = {int(BUSY_TIMEOUT_S * 1000)}")
        db.execute("PRAGMA journal_mode = WAL")
        db.execute("PRAGMA synchronous = NORMAL")
        # Checkpoints happen on the checkpoint thread; SQLite's own only as a backstop.
        db.execute(f"PRAGMA wal_autocheckpoint = {checkpoint.AUTOCHECKPOINT_PAGES}")
        version = db.execute("PRAGMA user_version").fetchone()[0]
        if 0 < version <= SCHEMA_VERSION and not _has_runs_table(db):
            version = 0  # a version without its table (a truncated copy): nothing to lose
        if version > SCHEMA_VERSION:
            raise StateError(
                f"run history {self.path} has schema version {version}; this toolctl reads "
                f"version {SCHEMA_VERSION}",
                hint="upgrade toolctl or use another --state file",
            )
        if version < SCHEMA_VERSION:
            with self._tx(durable=True):
                # BEGIN IMMEDIATE serialises set-ups: look again under the write lock.
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version == 0 or not _has_runs_table(db):
                    for statement in _DDL.split(";"):
                        if statement.strip():
                            db.execute(statement)
                else:
                    for step in _MIGRATIONS[version - 1 :]:
                        for statement in step:
                            db.execute(statement)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    @contextlib.contextmanager
    def _tx(self, durable: bool = False) -> Iterator[sqlite3.Connection]:
        """One ``BEGIN IMMEDIATE`` transaction; ``durable`` commits it with an fsync of the WAL
        (which also makes every earlier commit durable)."""
        with self._lock:
            if durable:
                self._db.execute("PRAGMA synchronous = FULL")
            try:
                self._db.execute("BEGIN IMMEDIATE")
                try:
                    yield self._db
                except BaseException:
                    if self._db.in_transaction:
                        self._db.execute("ROLLBACK")
                    raise
                else:
                    if self._db.in_transaction:
                        self._db.execute("COMMIT")
            finally:
                if durable:
                    self._db.execute("PRAGMA synchronous = NORMAL")

    @contextlib.contextmanager
    def batch(self) -> Iterator[Callable[[], bool]]:
        """The writes this thread makes inside the block share one transaction (one commit;
        other threads' writes wait for it). Yields ``intact()``: False once a failed write made
        SQLite abort the transaction (a full disk, an I/O error), undoing the writes before it;
        later writes of the block then commit one by one. A durable write in the block commits
        what came before it, then itself with an fsync (SQLite changes ``synchronous`` only
        between transactions)."""
        with self._lock, self._mapped("writing runs"):
            db = self._db
            db.execute("BEGIN IMMEDIATE")
            self._batching = True
            try:
                yield lambda: db.in_transaction
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            finally:
                self._batching = False
            if db.in_transaction:
                db.execute("COMMIT")
                self._committed()

    def _committed(self) -> None:
        """Count a commit; every ``checkpoint.EVERY_COMMITS``, ask for a checkpoint."""
        self._commits += 1
        if self._commits % checkpoint.EVERY_COMMITS == 0:
            checkpoint.request(str(self.path))

    def close(self) -> None:
        with self._lock:
            self._db.close()

    def binding_key(self) -> bytes:
        """The history's secret: ``<db>.key`` beside it, mode 0600 (see
        :mod:`toolctl.runtime.history.binding`)."""
        if self._key is None:
            from toolctl.runtime.history.binding import key_path, load_key

            self._key = load_key(key_path(self.path))
        return self._key

    def insert(self, record: RunRecord, *, durable: bool = False) -> None:
        """Add a run; ``durable`` survives a power loss (a run inserted in a pending state)."""
        self._write(_INSERT, rowcodec.record_values(record), durable)

    def _write(self, sql: str, args: list[Any], durable: bool) -> int:
        """One write statement; its row count.

        A single statement needs no explicit transaction: in autocommit mode SQLite takes the
        write lock when the statement starts (as ``BEGIN IMMEDIATE`` would, busy timeout
        included) and commits when it ends — one call into SQLite instead of three.
        """
        try:
            with self._lock:
                if self._batching and self._db.in_transaction:
                    return self._write_in_batch(sql, args, durable)
                if not durable:  # the hot path: one autocommit statement
                    count = int(self._db.execute(sql, args).rowcount)
                else:
                    with self._tx(durable=True) as db:
                        count = int(db.execute(sql, args).rowcount)
        except sqlite3.Error as exc:
            raise state_error(self.path, exc, "writing a run") from None
        self._committed()
        return count

    def _write_in_batch(self, sql: str, args: list[Any], durable: bool) -> int:
        """A write inside :meth:`batch` (its lock held): it joins the transaction, except a
        durable one, which commits the batch so far and then itself with an fsync."""
        db = self._db
        if not durable:
            return int(db.execute(sql, args).rowcount)
        db.execute("COMMIT")
        try:
            with self._tx(durable=True):
                return int(db.execute(sql, args).rowcount)
        finally:
            db.execute("BEGIN IMMEDIATE")

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
        ``durable`` for transitions that must survive a power loss. Status changes come from
        the run ledger (:mod:`toolctl.runtime.history.ledger`) only."""
        check_changes(changes)
        args = rowcodec.change_values(changes)
        where, wargs = _where(run_id, expect_status, expect_owner)
        sql = _update_sql(tuple(changes), where)
        return self._write(sql, [*args, *wargs], durable) == 1

    def get(self, run_id: str) -> RunRecord:
        """The run with this id, or the only run whose id starts with it."""
        with self._lock, self._mapped("reading a run"):
            row = self._db.execute("SELECT * FROM runs WHERE run_id = ?", (run_id,)).fetchone()
            if row is None and run_id:
                rows = self._db.execute(
                    "SELECT * FROM runs WHERE run_id LIKE ? ESCAPE '\\' LIMIT 2",
                    (rowcodec.like_prefix(run_id),),
                ).fetchall()
                row = rows[0] if len(rows) == 1 else None
                if len(rows) > 1:
                    raise ambiguous_prefix(run_id)
        if row is None:
            raise RunNotFoundError(
                f"no run {run_id!r} in {self.path}",
                hint="toolctl runs list shows the recorded runs",
            )
        return _decode(row)

    def query(
        self,
        *,
        tool: str | None = None,
        status: str | None = None,
        limit: int = 50,
        principal: str | None = None,
    ) -> list[RunRecord]:
        where, args = rowcodec.query_where(tool, status, "?", principal)
        with self._lock, self._mapped("listing runs"):
            rows = self._db.execute(
                f"SELECT * FROM runs {where} ORDER BY created_at DESC, run_id DESC LIMIT ?",
                [*args, rowcodec.query_limit(limit)],
            ).fetchall()
        return [_decode(r) for r in rows]

    def running(self) -> list[RunRecord]:
        """Every run now ``running``."""
        with self._lock, self._mapped("looking for interrupted runs"):
            rows = self._db.execute("SELECT * FROM runs WHERE status = 'running'").fetchall()
        return [_decode(r) for r in rows]

    def sweep(self) -> list[str]:
        """Mark runs left ``running`` by a dead process as ``interrupted`` (never re-run them):
        :func:`toolctl.runtime.history.ledger.sweep`."""
        from toolctl.runtime.history import ledger

        return ledger.sweep(self)


@functools.lru_cache(maxsize=256)
def _update_sql(names: tuple[str, ...], where: str) -> str:
    """The ``UPDATE`` statement that sets ``names`` (a handful of shapes, built once each)."""
    return f"UPDATE runs SET {', '.join(f'{k} = ?' for k in names)} WHERE {where}"


def _has_runs_table(db: sqlite3.Connection) -> bool:
    found = db.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'runs'")
    return found.fetchone() is not None


def _where(
    run_id: str, expect_status: str | tuple[str, ...] | None, expect_owner: str | None
) -> tuple[str, list[Any]]:
    clauses, args = ["run_id = ?"], [run_id]
    if isinstance(expect_status, str):
        clauses.append("status = ?")
        args.append(expect_status)
    elif expect_status:
        clauses.append(f"status IN ({','.join('?' * len(expect_status))})")
        args.extend(expect_status)
    if expect_owner is not None:
        clauses.append("owner IS ?")
        args.append(expect_owner)
    return " AND ".join(clauses), args


# ---------------------------------------------------------------- opening


def default_state_path(registry: HasProject | None = None) -> Path:
    """``state`` from the project config, else ``<project root>/.toolctl/state.db``."""
    project = getattr(registry, "project", None)
    configured = getattr(project, "state_path", None)
    if configured:
        return Path(configured)
    root = getattr(project, "root", None)
    return Path(root or ".") / ".toolctl" / "state.db"


def state_location(registry: HasProject | None = None) -> str | Path:
    """Where the registry's history lives: a PostgreSQL URL (``state:`` or ``TOOLCTL_STATE``)
    or the SQLite file of :func:`default_state_path`."""
    url = getattr(getattr(registry, "project", None), "state_url", None)
    return url if url else default_state_path(registry)


def is_url(state: object) -> bool:
    """Whether a ``state`` setting names a PostgreSQL database rather than a file
    (here, not in ``pgstore``: an SQLite history need not import the PostgreSQL store)."""
    from toolctl.config import POSTGRES_URLS

    return isinstance(state, str) and state.startswith(POSTGRES_URLS)


def open_store(path: str | Path | None = None, registry: HasProject | None = None) -> RunStore:
    """The store at ``path`` or at the registry's place, shared by the calls of the current
    :class:`~toolctl.runtime.resources.Runtime` (which closes it).

    ``path`` (or the registry's ``state``) is a file for SQLite or a ``postgresql://`` URL for
    :class:`~toolctl.runtime.history.postgres.PostgresStore`. The default ``.toolctl`` folder is
    created
    (mode 0700) when missing; an explicit path's directory must exist.
    """
    target = state_location(registry) if path is None else path
    if is_url(target):
        return _shared(str(target), lambda: _postgres(str(target)))
    target = Path(target)
    if path is None and not target.parent.exists():
        try:
            target.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError as exc:
            raise StateError(
                f"cannot create {target.parent}: {exc.strerror}", hint="pass --state PATH"
            ) from None
    file = target
    return _shared(str(real_path(file)), lambda: SqliteStore(file))


def _postgres(url: str) -> RunStore:
    import os

    from toolctl.runtime.history.postgres import PostgresStore, pool_sizes, pool_timeout

    low, high = pool_sizes(os.environ)
    wait = pool_timeout(os.environ)
    return PostgresStore(url, min_size=low, max_size=high, connect_timeout=wait)


def _shared(key: str, make: Callable[[], RunStore]) -> RunStore:
    from toolctl.runtime.resources import current

    return current().stores.get(key, make)
