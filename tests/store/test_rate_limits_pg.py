"""Rate limits on PostgreSQL: one bucket shared by every replica (two store handles here, two
``toolctl run`` processes below), taken atomically under concurrency."""

from __future__ import annotations

import json
import textwrap
import threading
from pathlib import Path

import pytest

from tests.store.procs import toolctl
from toolctl.runtime.history.postgres import PostgresStore

pytestmark = pytest.mark.requires("postgres")


def test_two_replicas_share_one_bucket(pg_url: str) -> None:
    one, two = PostgresStore(pg_url), PostgresStore(pg_url)
    try:
        waits = [store.take_call("t\nprincipal a", 3) for store in (one, two, one)]
        assert waits == [0.0, 0.0, 0.0]
        refused = [two.take_call("t\nprincipal a", 3), one.take_call("t\nprincipal a", 3)]
        assert all(10.0 < w <= 20.0 for w in refused), refused  # next free call in <= 60/3 s
        assert one.take_call("t\nprincipal b", 3) == 0.0  # another caller: its own bucket
        assert two.take_call("u\nprincipal a", 3) == 0.0  # another tool: its own bucket
        rows = one._run("SELECT bucket FROM toolctl_rate_limits", fetch=True)
        assert all("principal" not in r["bucket"] for r in rows)  # digests, no identities
    finally:
        one.close()
        two.close()


def test_concurrent_calls_never_take_more_than_the_limit(pg_url: str) -> None:
    stores = [PostgresStore(pg_url, max_size=4) for _ in range(2)]
    allowed: list[float] = []
    lock = threading.Lock()

    def hammer(store: PostgresStore) -> None:
        for _ in range(10):
            wait = store.take_call("busy\nlocal", 5)
            with lock:
                allowed.append(wait)

    try:
        threads = [threading.Thread(target=hammer, args=(s,)) for s in stores for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert len(allowed) == 40
        assert sum(1 for w in allowed if w == 0.0) == 5  # exactly the burst, across both
    finally:
        for store in stores:
            store.close()


PROJECT = {
    "toolctl.yaml": "tools: tools.d\npythonPath: [.]\n",
    "handlers.py": "def echo(input):\n    return input\n",
    "tools.d/echo.yaml": textwrap.dedent("""
        toolctl: 1
        name: echo
        description: Echo the input.
        handler: handlers:echo
        limits: {callsPerMinute: 1}
    """),
}


def test_the_cli_run_past_the_limit_exits_1_with_the_limit_and_the_wait(
    pg_url: str, tmp_path: Path
) -> None:
    for name, text in PROJECT.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    first = toolctl(tmp_path, pg_url, "run", "echo", "--input", "{}", "--format", "json")
    assert json.loads(first.stdout)["status"] == "succeeded"
    second = toolctl(tmp_path, pg_url, "run", "echo", "--input", "{}", expect=1)
    shown = second.stdout + second.stderr
    assert "rate limited: echo allows 1 call(s) a minute per caller" in shown
    assert "retry in" in shown
    assert "Traceback" not in shown


def test_drained_buckets_are_deleted_now_and_then(
    pg_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    from toolctl.runtime import ratelimit

    monkeypatch.setattr(ratelimit, "PG_CLEAN_EVERY", 3)
    store = PostgresStore(pg_url)
    try:
        store.take_call("a\nlocal", 10**9)  # one call frees up again after 60 ns
        store.take_call("b\nlocal", 10**9)
        store.take_call("c\nlocal", 1)  # the third take cleans up: a and b have drained
        rows = store._run("SELECT bucket FROM toolctl_rate_limits", fetch=True)
        assert len(rows) == 1  # only c, whose call is still counted for a minute
        assert store.take_call("c\nlocal", 1) > 0
    finally:
        store.close()
