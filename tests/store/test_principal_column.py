"""The principal column (issue 22): every store records who started a run over MCP and lists
one subject's runs (``runs list --principal SUB``), PostgreSQL included."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolctl.principal import Principal
from toolctl.runtime.history.memory import MemoryStore
from toolctl.runtime.history.records import Origin, RunRecord, RunStore
from toolctl.runtime.history.sqlite import SqliteStore

ALICE = Principal("https://idp.example.com", "alice", "app")
BOB = Principal("https://idp.example.com", "bob")


def _fill(store: RunStore) -> None:
    for n, who in enumerate((ALICE, BOB, None, ALICE)):
        store.insert(
            RunRecord(
                run_id=f"r{n}",
                tool="echo",
                status="succeeded",
                tool_digest="d",
                created_at=float(n),
                origin=Origin.MCP if who else Origin.CLI,
                principal=who.public() if who else None,
            )
        )


def _check(store: RunStore) -> None:
    _fill(store)
    assert [r.run_id for r in store.query(principal="alice")] == ["r3", "r0"]
    assert [r.run_id for r in store.query(principal="bob")] == ["r1"]
    assert store.query(principal="carol") == []
    assert len(store.query()) == 4
    assert store.get("r0").principal == {"iss": ALICE.issuer, "sub": "alice", "client_id": "app"}
    assert Principal.from_public(store.get("r1").principal) == BOB
    assert store.get("r2").principal is None


@pytest.mark.parametrize("kind", ["memory", "sqlite"])
def test_the_embedded_stores_record_and_filter_the_principal(tmp_path: Path, kind: str) -> None:
    _check(MemoryStore() if kind == "memory" else SqliteStore(tmp_path / "s.db"))


def test_postgres_records_and_filters_the_principal(pg_url: str) -> None:
    from toolctl.runtime.history.postgres import PostgresStore

    store = PostgresStore(pg_url)
    try:
        _check(store)
    finally:
        store.close()
