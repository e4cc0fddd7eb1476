"""A throwaway PostgreSQL cluster for tests and benchmarks: ``initdb`` + ``pg_ctl`` in a temporary
directory, listening on a free loopback port (no Unix socket outside that directory).

As root (CI and these machines), the server binaries refuse to run; the cluster then belongs to
the ``postgres`` user and every command runs through ``runuser -u postgres --``.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

PASSWORD = "s3cret-pg-pw"  # a fixed test password: tests check that it never reaches output
USER = "toolctl"  # the superuser of every cluster started here


@dataclass(frozen=True)
class Cluster:
    """A running cluster: its data directory, port and a superuser URL."""

    data: Path
    port: int
    user: str

    @property
    def url(self) -> str:
        return self.database_url("postgres")

    def database_url(self, name: str) -> str:
        return f"postgresql://{self.user}:{PASSWORD}@127.0.0.1:{self.port}/{name}"

    def create_database(self, name: str) -> str:
        """A fresh database ``name`` (dropped first if it exists); its URL."""
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.database_url(name)


def binaries() -> Path | None:
    """The directory of ``initdb``/``pg_ctl``: on PATH, or Debian's versioned directory."""
    found = shutil.which("pg_ctl")
    if found and shutil.which("initdb"):
        return Path(found).parent
    for candidate in sorted(Path("/usr/lib/postgresql").glob("*/bin"), reverse=True):
        if (candidate / "pg_ctl").exists() and (candidate / "initdb").exists():
            return candidate
    return None


def runuser() -> str | None:
    """``runuser`` (to run the server binaries as ``postgres`` when root): on PATH, or where
    util-linux puts it, which is not on every PATH (``/usr/sbin`` is missing from some)."""
    found = shutil.which("runuser")
    if found:
        return found
    for candidate in ("/usr/sbin/runuser", "/sbin/runuser", "/usr/bin/runuser", "/bin/runuser"):
        if os.access(candidate, os.X_OK):
            return candidate
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _as_owner(argv: list[str]) -> list[str]:
    if os.geteuid() == 0:
        return [runuser() or "runuser", "-u", "postgres", "--", *argv]
    return argv


def _run(argv: list[str], log: Path | None = None) -> None:
    """Run a server binary as the cluster's owner; a failure says which and why (its stderr,
    and the server log for ``pg_ctl start``), not only an exit status."""
    result = subprocess.run(_as_owner(argv), capture_output=True, text=True)
    if result.returncode != 0:
        server_log = log.read_text(errors="replace") if log and log.exists() else ""
        raise RuntimeError(
            f"{Path(argv[0]).name} failed (exit {result.returncode}): "
            f"{(result.stderr or result.stdout).strip()}\n{server_log}".rstrip()
        )


# A cluster already running (one this module started: its superuser and PASSWORD) that a
# benchmark script uses instead of starting its own: ``DATA_DIR:PORT``. The test suite passes
# its session cluster's, which saves each bench smoke test an initdb and a server start.
REUSE_ENV = "BENCH_PG_CLUSTER"


def reuse_value(cluster: Cluster) -> str:
    """What :data:`REUSE_ENV` says for ``cluster``."""
    return f"{cluster.data}:{cluster.port}"


@contextlib.contextmanager
def bench_cluster() -> Iterator[Cluster]:
    """The cluster :data:`REUSE_ENV` names (left running), else a throwaway one."""
    named = os.environ.get(REUSE_ENV)
    if named:
        data, _, port = named.rpartition(":")
        yield Cluster(Path(data), int(port), USER)
        return
    with running_cluster() as cluster:
        yield cluster


@contextlib.contextmanager
def running_cluster() -> Iterator[Cluster]:
    """Start a cluster; stop it (immediate mode) and delete its files on exit."""
    bindir = binaries()
    if bindir is None:
        raise RuntimeError("PostgreSQL server binaries (initdb, pg_ctl) are not installed")
    base = Path(tempfile.mkdtemp(prefix="toolctl-pg-"))
    data = base / "data"
    pwfile = base / "pw"
    pwfile.write_text(PASSWORD)
    if os.geteuid() == 0:
        shutil.chown(base, "postgres")
        shutil.chown(pwfile, "postgres")
    os.chmod(base, 0o700)
    user = USER
    port = _free_port()
    try:
        _run(
            [
                str(bindir / "initdb"),
                "-D",
                str(data),
                "-U",
                user,
                "--pwfile",
                str(pwfile),
                "-A",
                "scram-sha-256",
                "--no-sync",
                "-E",
                "UTF8",
            ]
        )
        options = (
            f"-p {port} -c listen_addresses=127.0.0.1 -k {base} -c fsync=off "
            "-c max_connections=200 -c shared_buffers=32MB"
        )
        log = base / "log"
        _run(
            [str(bindir / "pg_ctl"), "-D", str(data), "-o", options, "-w", "-l", str(log), "start"],
            log,
        )
        yield Cluster(data, port, user)
    finally:
        if (data / "postmaster.pid").exists():
            subprocess.run(
                _as_owner([str(bindir / "pg_ctl"), "-D", str(data), "-m", "immediate", "stop"]),
                capture_output=True,
            )
        shutil.rmtree(base, ignore_errors=True)
