"""Suite-wide test marking: which tests are ``slow`` (``pytest -m "not slow"`` skips them).

A test is slow when it starts a process (a server, a background worker, ``python -m toolctl``,
a subprocess-isolated handler), runs a benchmark, or executes the documentation. Rather than a
decorator on each test, the rules live here, so a new test is marked by what it does:

- every test in a module listed in ``SLOW_MODULES`` or named ``test_bench*``/``test_readme*``;
- every test whose own body mentions one of ``SLOW_CALLS`` (``subprocess``, ``run_toolctl``,
  ``http_server``, ``--background`` ...) or that uses a fixture listed in ``SLOW_FIXTURES``;
- any test decorated with ``@pytest.mark.slow`` by hand (for what the rules above miss).

The full suite (``pytest``, as in the README and CI) still runs everything.
"""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

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
SLOW_PREFIXES = ("test_bench", "test_readme")
SLOW_FIXTURES = {"http_server", "stdio_params", "run_serve"}
SLOW_CALLS = (
    "subprocess",
    "Popen",
    "sys.executable",
    "run_toolctl",
    "run_serve",
    "http_server",
    "stdio_params",
    "--background",
    "background=True",
)


def _is_slow(item: pytest.Item) -> bool:
    path = Path(str(item.fspath)).resolve()
    try:
        relative = path.relative_to(TESTS).as_posix()
    except ValueError:
        return False
    if relative in SLOW_MODULES or path.name.startswith(SLOW_PREFIXES):
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
