"""``toolctl runs list --limit`` past what SQL can take (issue 20, class 6): a usage error
for the CLI, and all runs for the Python API, never an overflow blamed on the history."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolctl.cli.app import run as cli
from toolctl.registry import Registry
from toolctl.runtime.history.codec import MAX_QUERY_LIMIT
from toolctl.runtime.history.sqlite import SqliteStore

Capture = pytest.CaptureFixture[str]


def test_a_limit_past_int64_is_a_usage_error(project: Path, capsys: Capture) -> None:
    capsys.readouterr()
    code = cli(["runs", "list", "--limit", str(2**63)])
    err = capsys.readouterr().err
    assert code == 2
    assert "--limit" in err and "internal error" not in err and "OverflowError" not in err


def test_the_largest_limit_lists_every_run(reg: Registry, project: Path, capsys: Capture) -> None:
    reg.call("add", {"a": 1, "b": 2})
    capsys.readouterr()
    assert cli(["runs", "list", "--limit", str(MAX_QUERY_LIMIT)]) == 0
    assert "add" in capsys.readouterr().out


def test_the_store_takes_any_limit_from_the_api(tmp_path: Path) -> None:
    store = SqliteStore(tmp_path / "state.db")
    try:
        assert store.query(limit=2**70) == []
    finally:
        store.close()
