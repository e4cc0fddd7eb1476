"""Suite-wide test marking: which tests are ``slow`` (``pytest -m "not slow"`` skips them).

A test is slow when it starts a process (a server, a background worker, ``python -m toolctl``,
a subprocess-isolated handler), runs a benchmark, or executes the documentation. Rather than a
decorator on each test, the rules live here, so a new test is marked by what it does:

- every test in a module listed in ``SLOW_MODULES`` or named ``test_bench*``/``test_readme*``,
  and the tests listed in ``SLOW_TESTS`` (they start processes through the tools they run);
- every test whose own body mentions one of ``SLOW_CALLS`` (``subprocess``, ``run_toolctl``,
  ``http_server``, ``--background`` ...) or that uses a fixture listed in ``SLOW_FIXTURES``;
- any test decorated with ``@pytest.mark.slow`` by hand (for what the rules above miss).

The full suite (``pytest``, as in the README and CI) still runs everything.
"""

from __future__ import annotations

import inspect
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

TESTS = Path(__file__).resolve().parent

# The load cache (and the remembered config settings) of every command a test runs, in process
# or in a child process, go to one temporary directory instead of the fixture directories in
# the repository and the user's ~/.cache. Tests about where the cache lives unset it.
_CACHE = tempfile.mkdtemp(prefix="toolctl-test-cache-")
os.environ["TOOLCTL_CACHE_DIR"] = _CACHE
# The key of the cache's MACs likewise, instead of the user's ~/.local/share/toolctl.
_DATA = tempfile.mkdtemp(prefix="toolctl-test-data-")
os.environ["TOOLCTL_DATA_DIR"] = _DATA


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(_CACHE, ignore_errors=True)
    shutil.rmtree(_DATA, ignore_errors=True)


SLOW_MODULES = {
    # each test starts an MCP server (stdio child process or HTTP on loopback)
    "server/test_calls.py",
    "server/test_http_security.py",
    "server/test_list.py",
    "server/test_reload.py",
    "server/test_stdio.py",
    # handlers isolated in a subprocess; detached background workers
    "runtime/test_limits.py",
    "runtime/test_background.py",
    # ruff, ruff format and mypy --strict over the code base
    "test_quality.py",
}
# tests that start worker processes through the pipeline (background runs, `isolation:
# subprocess` tools in the registries they use), found by recording process starts
SLOW_TESTS = {
    "runtime/test_durability.py::test_background_start_survives_a_power_loss",
    "runtime/test_examples.py::test_calculator_runs_isolated",
    "runtime/test_examples.py::test_index_files_runs_in_the_background",
    "runtime/test_examples.py::test_every_enabled_example_is_covered",  # needs the two above
    "testing/test_cli.py::test_passing_project_exits_0",
    "testing/test_example_registry.py::test_every_example_tool_passes_its_cases",
    "testing/test_runner.py::test_background_cases_wait_for_the_worker_or_see_it_running",
    "testing/test_runner.py::test_every_fixture_case_passes",
    "testing/test_runner.py::test_the_users_run_history_is_never_touched",
}
SLOW_PREFIXES = ("test_bench", "test_readme")
SLOW_FIXTURES = {"http_server", "stdio_params", "run_serve"}
SLOW_CALLS = (
    "subprocess",
    "Popen",
    "sys.executable",
    "run_toolctl",
    "_toolctl(",  # tests/runtime/test_guarantees.py: `python -m toolctl` as a process
    "run_serve",
    "http_server",
    "stdio_params",
    "--background",
    "background=True",
)


def _is_slow(item: pytest.Item) -> bool:
    path = item.path.resolve()
    try:
        relative = path.relative_to(TESTS).as_posix()
    except ValueError:
        return False
    if relative in SLOW_MODULES or path.name.startswith(SLOW_PREFIXES):
        return True
    if f"{relative}::{getattr(item, 'originalname', item.name)}" in SLOW_TESTS:
        return True
    if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    function = getattr(item, "function", None)
    if function is None:
        return False
    try:
        source = inspect.getsource(function)
    except (OSError, TypeError):
        return False
    return any(call in source for call in SLOW_CALLS)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Add the ``slow`` marker by the rules in this module's docstring."""
    for item in items:
        if item.get_closest_marker("slow") is None and _is_slow(item):
            item.add_marker(pytest.mark.slow)


# ``TOOLCTL_FIND_SLOW=1 pytest -m "not slow"`` lists the unmarked tests that still start a
# process (how SLOW_TESTS was found): add them to SLOW_TESTS or mark them by hand.
if os.environ.get("TOOLCTL_FIND_SLOW"):
    _current: list[str] = []
    _starters: set[str] = set()
    _popen_init = subprocess.Popen.__init__
    _fork = os.fork

    def _note() -> None:
        if _current:
            _starters.add(_current[-1])

    def _recording_popen(self: Any, *args: Any, **kwargs: Any) -> None:
        _note()
        _popen_init(self, *args, **kwargs)

    def _recording_fork() -> int:
        _note()
        return _fork()

    subprocess.Popen.__init__ = _recording_popen  # type: ignore[method-assign]
    os.fork = _recording_fork

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(item: pytest.Item) -> Iterator[None]:
        _current.append(item.nodeid)
        yield
        _current.pop()

    def pytest_terminal_summary(terminalreporter: Any) -> None:
        terminalreporter.section("tests that start processes")
        for nodeid in sorted(_starters):
            terminalreporter.write_line(nodeid)
