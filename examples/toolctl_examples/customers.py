"""``customer_lookup``: read one customer from a read-only SQLite database.

The database is built on first use from ``examples/data/customers.sql`` into a state directory
(``TOOLCTL_EXAMPLES_STATE`` if set, else a per-user folder in the system temp dir). The file name
carries a hash of the SQL, so editing the SQL rebuilds it. Queries run on a ``mode=ro`` connection:
the tool cannot change the data even if a bug tried to.
"""

from __future__ import annotations

import hashlib
import os
import sqlite3
import tempfile
from contextlib import closing
from pathlib import Path
from typing import Any

SQL_FILE = Path(__file__).resolve().parent.parent / "data" / "customers.sql"
STATE_ENV = "TOOLCTL_EXAMPLES_STATE"

_COLUMNS = ("id", "name", "email", "plan", "country", "since", "api_key")


class CustomerNotFound(LookupError):
    """No customer has the requested id."""


def lookup_customer(data: dict[str, Any]) -> dict[str, str]:
    """Return the customer ``data["customerId"]`` including its ``apiKey`` secret.

    Raises :class:`CustomerNotFound` when there is no such customer.
    """
    customer_id: str = data["customerId"]
    uri = f"{database_path().as_uri()}?mode=ro"
    with closing(sqlite3.connect(uri, uri=True)) as conn:
        row = conn.execute(
            f"SELECT {', '.join(_COLUMNS)} FROM customers WHERE id = ?", (customer_id,)
        ).fetchone()
    if row is None:
        raise CustomerNotFound(f"no customer with id {customer_id!r}")
    record = dict(zip(_COLUMNS, row, strict=True))
    return {
        "id": record["id"],
        "name": record["name"],
        "email": record["email"],
        "plan": record["plan"],
        "country": record["country"],
        "since": record["since"],
        "apiKey": record["api_key"],
    }


def database_path() -> Path:
    """The built database, created (atomically) from the SQL file when missing."""
    sql = SQL_FILE.read_bytes()
    digest = hashlib.sha256(sql).hexdigest()[:12]
    state = Path(os.environ.get(STATE_ENV) or _default_state_dir())
    path = state / f"customers-{digest}.db"
    if not path.exists():
        state.mkdir(parents=True, exist_ok=True)
        # Build under a unique name and rename: concurrent first calls never see half a database.
        fd, tmp = tempfile.mkstemp(prefix=".customers-", suffix=".db", dir=state)
        os.close(fd)
        try:
            with closing(sqlite3.connect(tmp)) as conn:
                conn.executescript(sql.decode("utf-8"))
                conn.commit()
            os.replace(tmp, path)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)
    return path


def _default_state_dir() -> Path:
    uid = os.getuid() if hasattr(os, "getuid") else "user"
    return Path(tempfile.gettempdir()) / f"toolctl-examples-{uid}"
