"""Database faults for the PostgreSQL tests: a ``pg_ctl restart`` of the test cluster, and one
database refusing connections (an outage of that database only, so other tests' databases on
the shared cluster are not disturbed)."""

from __future__ import annotations

import contextlib
import subprocess
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from bench import pgcluster

if TYPE_CHECKING:
    import psycopg


def restart(cluster: pgcluster.Cluster, mode: str = "fast") -> None:
    """``pg_ctl restart -m MODE``: every open connection is cut; the server is back on return
    (``pg_ctl`` reuses the options the cluster was started with)."""
    bindir = pgcluster.binaries()
    assert bindir is not None
    log = str(cluster.data.parent / "log")  # the new server's output: not a pipe left open
    argv = [str(bindir / "pg_ctl"), "-D", str(cluster.data), "-m", mode, "-w", "-l", log]
    done = subprocess.run(
        pgcluster._as_owner([*argv, "restart"]),
        stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=180,  # a checkpoint on a machine busy with the rest of the suite: minutes
    )
    assert done.returncode == 0, f"pg_ctl restart failed: see {log}"


def connections(
    cluster: pgcluster.Cluster, database: str, conn: psycopg.Connection[Any] | None = None
) -> dict[str, int]:
    """The open connections to ``database``, counted by ``application_name``; asked on ``conn``
    (a connection to another database, reused by a caller that samples often: each new one
    costs about 20 ms of CPU, SCRAM and a server fork) or on a connection of its own."""
    import psycopg

    if conn is None:
        with psycopg.connect(cluster.url, autocommit=True) as own:
            return connections(cluster, database, own)
    rows = conn.execute(
        "SELECT application_name, count(*) FROM pg_stat_activity WHERE datname = %s "
        "GROUP BY application_name",
        (database,),
    ).fetchall()
    return {str(name): int(count) for name, count in rows}


@contextlib.contextmanager
def refused(cluster: pgcluster.Cluster, database: str, *, cut: bool = True) -> Iterator[None]:
    """``database`` is unavailable inside the block: its connections are cut (unless not
    ``cut``: then only new ones are refused, as with a full connection table) and new ones are
    refused, as while its server restarts; it accepts connections again afterwards."""
    import psycopg

    with psycopg.connect(cluster.url, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS false')
        if cut:
            conn.execute(
                "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s",
                (database,),
            )
        try:
            yield
        finally:
            conn.execute(f'ALTER DATABASE "{database}" ALLOW_CONNECTIONS true')
