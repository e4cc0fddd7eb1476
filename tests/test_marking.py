"""The suite's own rules (tests/conftest.py, tests/prereqs.py): what ``pytest -m "not slow"``
selects, how a missing prerequisite is reported, and the environment every test runs in."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from tests import conftest

REPO = Path(__file__).resolve().parents[1]
# a collection plugin that writes, per selected test, its node id, fixtures and markers
DUMP = textwrap.dedent("""
    import json, os

    def pytest_collection_finish(session):
        with open(os.environ["MARKING_DUMP"], "w") as fh:
            json.dump([
                {"id": item.nodeid, "fixtures": sorted(getattr(item, "fixturenames", ())),
                 "markers": sorted({m.name for m in item.iter_markers()})}
                for item in session.items
            ], fh)
""")


def _pytest(tmp_path: Path, *args: str, env: dict[str, str] | None = None) -> str:
    """Run this suite's pytest in a child (one process, no xdist); its output."""
    (tmp_path / "marking_dump.py").write_text(DUMP)
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-n", "0", "-p", "no:cacheprovider", *args],
        cwd=REPO,
        env={**os.environ, "PYTHONPATH": str(tmp_path), **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )
    return done.stdout + done.stderr


def _whole_suite(config: pytest.Config) -> bool:
    """Whether this session collected the whole suite, none of it deselected (a plain
    ``pytest``, as CI runs it)."""
    args = {(config.invocation_params.dir / arg).resolve() for arg in config.args}
    narrowed = (
        config.option.keyword,
        config.option.markexpr,
        config.getoption("deselect", None),
        config.getoption("lf", None),
        config.getoption("stepwise", None),
    )
    return args <= {REPO, REPO / "tests"} and not any(narrowed)


def _fast_subset(request: pytest.FixtureRequest, tmp_path: Path) -> tuple[list[Any], str]:
    """What ``pytest -m "not slow"`` selects (id, fixtures, markers of each test), and how it
    was found. In a full run this session's own collection has the answer (each xdist worker
    collects everything, marked by tests/conftest.py): collecting the suite again in a child
    costs seconds. Run alone, the test collects the suite in a child."""
    if _whole_suite(request.config):
        selected = [
            {
                "id": item.nodeid,
                "fixtures": sorted(getattr(item, "fixturenames", ())),
                "markers": sorted({m.name for m in item.iter_markers()}),
            }
            for item in request.session.items
            if item.get_closest_marker("slow") is None
        ]
        return selected, "this session's collection"
    dump = tmp_path / "selected.json"
    out = _pytest(
        tmp_path,
        "--collect-only",
        "-q",
        "-m",
        "not slow",
        "-p",
        "marking_dump",
        env={"MARKING_DUMP": str(dump)},
    )
    return json.loads(dump.read_text()), out


@pytest.mark.timeout(600)  # may collect the whole suite
def test_the_fast_subset_starts_no_fleet_no_postgresql_and_no_npm(
    request: pytest.FixtureRequest, tmp_path: Path
) -> None:
    selected, out = _fast_subset(request, tmp_path)
    assert len(selected) > 500, out  # the dump saw the real suite
    offenders = [
        t["id"]
        for t in selected
        if {"pg", "pg_url", "mcp_node_tools", "http_server", "stdio_params"} & set(t["fixtures"])
        or "requires" in t["markers"]
        or t["id"].startswith(("tests/store/test_replicas.py", "tests/server/test_node_clients"))
        or "[postgres]" in t["id"]
    ]
    assert offenders == []
    # the Wire(...) helper of tests/server/test_tasks.py starts `toolctl serve`: its users are
    # slow although their own bodies never mention a process
    tasks = {t["id"].split("::")[1] for t in selected if "server/test_tasks.py" in t["id"]}
    assert "test_a_cancelled_task_stops_its_run" not in tasks
    assert "test_every_run_status_is_a_task_status" in tasks  # pure: stays fast


@pytest.mark.timeout(600)
def test_a_missing_prerequisite_is_one_skip_line_and_a_failure_in_ci(tmp_path: Path) -> None:
    selection = ["tests/store/test_postgres.py", "tests/store/test_migrations.py", "-ra"]
    outside_ci = {"TOOLCTL_TEST_WITHOUT": "postgres", "CI": "", "TOOLCTL_REQUIRE_NODE_TOOLS": ""}
    out = _pytest(tmp_path, *selection, env=outside_ci)  # .ci/run sets both: unset here
    skip_lines = [line for line in out.splitlines() if line.startswith("SKIPPED")]
    assert len(skip_lines) == 1, out
    assert "PostgreSQL server binaries" in skip_lines[0]
    assert "install the `postgresql` package" in skip_lines[0]
    count = int(skip_lines[0].split("[", 1)[1].split("]", 1)[0])
    assert count > 5  # every PostgreSQL test of the two files, folded into the one line
    assert " failed" not in out and " error" not in out, out

    ci = _pytest(tmp_path, *selection, env={"TOOLCTL_TEST_WITHOUT": "postgres", "CI": "true"})
    assert not [line for line in ci.splitlines() if line.startswith("SKIPPED")]
    assert "(required here: CI or TOOLCTL_REQUIRE_NODE_TOOLS is set)" in ci
    assert f"{count} error" in ci, ci  # a failure in setup: an error per test


def _spawns(args: list[str]) -> object:
    return subprocess.run(args, check=False)


def _calls_a_spawner() -> object:
    return _spawns(["true"])


def _pure(x: int) -> int:
    return x + 1


class _Starter:
    def start(self) -> object:
        return subprocess.Popen(["true"])


def test_a_helper_that_starts_a_process_makes_its_callers_slow() -> None:
    scanner = conftest._Scanner()

    def uses_helper() -> None:
        _calls_a_spawner()

    def uses_class() -> None:
        _Starter().start()

    def uses_pure() -> None:
        _pure(1)

    assert scanner.mentions_slow_call(uses_helper)  # two calls deep
    assert scanner.mentions_slow_call(uses_class)  # through a class's methods
    assert not scanner.mentions_slow_call(uses_pure)


def test_every_test_runs_in_the_same_environment() -> None:
    # tests/conftest.py: a developer's TERM=dumb, COLUMNS=40, LANG=C or NO_COLOR never reaches
    # a test (tests that need one set it themselves)
    assert os.environ["TERM"] == "xterm"
    assert os.environ["LANG"] == "C.UTF-8"
    for name in ("COLUMNS", "LINES", "NO_COLOR", "FORCE_COLOR", "LC_ALL", "TOOLCTL_STATE"):
        assert name not in os.environ


@pytest.mark.parametrize("shell", [{"TERM": "dumb", "COLUMNS": "40", "LANG": "C"}])
def test_the_normalisation_undoes_a_hostile_shell(shell: dict[str, str]) -> None:
    environ = {**shell, "NO_COLOR": "1", "TOOLCTL_STATE": "postgresql://x", "PATH": "/bin"}
    conftest._normalise_environment(environ)
    assert environ == {"TERM": "xterm", "LANG": "C.UTF-8", "PATH": "/bin"}


def test_bytecode_is_kept_out_of_the_checkout_but_not_thrown_away(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    monkeypatch.setattr(sys, "pycache_prefix", None)
    environ = {"PYTHONDONTWRITEBYTECODE": "1"}
    conftest._keep_bytecode(environ)
    prefix = str(REPO / ".cache" / "pycache")
    assert environ == {"PYTHONPYCACHEPREFIX": prefix}  # and so for every child process
    assert (sys.dont_write_bytecode, sys.pycache_prefix) == (False, prefix)
