"""Stores under test: every ``RunStore`` implementation runs the same contract suite.

PostgreSQL runs in a throwaway cluster (``bench/pgcluster.py``), one per test session (one per
pytest-xdist worker: each on its own free port and temporary directory), with a fresh database
per test. The ``pg`` fixture and the ``postgres`` store need the server binaries
(``@pytest.mark.requires("postgres")``, see ``tests/prereqs.py``): without them those tests skip
with one line, except in CI, where ``.ci/run`` installs them and a missing server is a failure.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest
from bench import pgcluster

from toolctl.runtime.history.memory import MemoryStore
from toolctl.runtime.history.records import RunStore
from toolctl.runtime.history.sqlite import SqliteStore

_DB_NUMBERS = itertools.count()


@pytest.fixture(scope="session")
def pg() -> Iterator[pgcluster.Cluster]:
    # tests/conftest.py marks its users `requires("postgres")`: they skip before reaching here
    with pgcluster.running_cluster() as cluster:
        yield cluster


@pytest.fixture
def pg_url(pg: pgcluster.Cluster) -> str:
    """A fresh, empty database."""
    return pg.create_database(f"t{next(_DB_NUMBERS)}")


@pytest.fixture(
    params=["memory", "sqlite", pytest.param("postgres", marks=pytest.mark.requires("postgres"))]
)
def kind(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
def make_store(kind: str, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[object]:
    """A factory: each call opens another handle on the same store (another 'process')."""
    opened: list[RunStore] = []
    memory = MemoryStore()
    url = request.getfixturevalue("pg_url") if kind == "postgres" else None

    def make(**options: object) -> RunStore:
        store: RunStore
        if kind == "memory":
            store = memory
        elif kind == "sqlite":
            store = SqliteStore(tmp_path / "state.db", **options)  # type: ignore[arg-type]
        else:
            from toolctl.runtime.history.postgres import PostgresStore

            assert url is not None
            store = PostgresStore(url, **options)  # type: ignore[arg-type]
        opened.append(store)
        return store

    yield make
    for store in opened:
        store.close()  # type: ignore[attr-defined]
