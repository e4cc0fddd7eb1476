"""Suite-wide test marking: which tests are ``slow`` (``pytest -m "not slow"`` skips them).

A test is slow when it starts a process (a server, a background worker, ``python -m toolctl``,
a subprocess-isolated handler), runs a benchmark, or executes the documentation. Rather than a
decorator on each test, the rules live here, so a new test is marked by what it does:

- every test in a module listed in ``SLOW_MODULES`` or named ``test_bench*``/``test_readme*``,
  and the tests listed in ``SLOW_TESTS`` (they start processes through the tools they run);
- every test whose own body mentions one of ``SLOW_CALLS`` (``subprocess``, ``run_toolctl``,
  ``http_server``, ``--background`` ...) or that uses a fixture listed in ``SLOW_FIXTURES``;
- any test decorated with ``@pytest.mark.slow`` by hand (for what the rules above miss).

- every test that needs a prerequisite (``@pytest.mark.requires(...)``, added here by fixture:
  ``pg``/``pg_url`` need PostgreSQL, ``mcp_node_tools`` Node.js and npm; see ``tests/prereqs.py``);
- every test whose body, or a helper under ``tests/`` or ``bench/`` that it (or one of its
  fixtures) calls, mentions one of ``SLOW_CALLS`` — so ``Wire(...)``, ``replica(...)`` or a
  fixture that starts a cluster mark their users slow without a list to keep.

So ``pytest -m "not slow"`` starts no server, no worker, no PostgreSQL and no npm.
``tests/test_marking.py`` holds that. The full suite (``pytest``, as in the README and CI) still
runs everything, spread over CPUs by pytest-xdist (``-n auto`` in pyproject.toml).
"""

from __future__ import annotations

import functools
import inspect
import linecache
import os
import shutil
import subprocess
import sys
import tempfile
import types
from collections.abc import Iterator, MutableMapping
from pathlib import Path
from typing import Any

import pytest

from tests import prereqs

TESTS = Path(__file__).resolve().parent

# The load cache (and the remembered config settings) of every command a test runs, in process
# or in a child process, go to one temporary directory instead of the fixture directories in
# the repository and the user's ~/.cache. Tests about where the cache lives unset it.
_CACHE = tempfile.mkdtemp(prefix="toolctl-test-cache-")
os.environ["TOOLCTL_CACHE_DIR"] = _CACHE
# The key of the cache's MACs likewise, instead of the user's ~/.local/share/toolctl.
_DATA = tempfile.mkdtemp(prefix="toolctl-test-data-")
os.environ["TOOLCTL_DATA_DIR"] = _DATA


# What a developer's shell may set that changes what the code under test prints or does: the
# terminal's kind and size, colour switches, the locale, and toolctl's own settings. The suite
# runs with none of them (a terminal-less xterm, UTF-8, default width), in this process and in
# every child it starts, so `TERM=dumb COLUMNS=40 LANG=C pytest` passes as plain `pytest`
# does. A test about one of them sets it itself (monkeypatch.setenv).
UNSET_ENV = (
    "COLUMNS",
    "LINES",
    "NO_COLOR",
    "FORCE_COLOR",
    "CLICOLOR",
    "CLICOLOR_FORCE",
    "COLORTERM",
    "TTY_COMPATIBLE",
    "TTY_INTERACTIVE",
    "LC_ALL",
    "LC_CTYPE",
    "LC_MESSAGES",
    "LANGUAGE",
    "PYTHONIOENCODING",
)
KEPT_TOOLCTL_ENV = (
    "TOOLCTL_CACHE_DIR",
    "TOOLCTL_DATA_DIR",
    "TOOLCTL_REQUIRE_NODE_TOOLS",
    "TOOLCTL_FIND_SLOW",
    "TOOLCTL_TEST_WITHOUT",
)


def _normalise_environment(environ: MutableMapping[str, str]) -> None:
    for name in UNSET_ENV:
        environ.pop(name, None)
    for name in [n for n in environ if n.startswith("TOOLCTL_") and n not in KEPT_TOOLCTL_ENV]:
        del environ[name]
    environ["TERM"] = "xterm"
    environ["LANG"] = "C.UTF-8"


_normalise_environment(os.environ)


def _keep_bytecode(environ: MutableMapping[str, str]) -> None:
    """Under ``PYTHONDONTWRITEBYTECODE`` every process (each xdist worker collecting the suite,
    each ``python -m toolctl`` a test starts) compiles every module again: about half of the
    collection's CPU. Write the bytecode under ``.cache/pycache`` instead (``sys.pycache_prefix``),
    so the checkout still gets no ``__pycache__`` folders."""
    if not (sys.dont_write_bytecode or environ.get("PYTHONDONTWRITEBYTECODE")):
        return
    prefix = environ.get("PYTHONPYCACHEPREFIX") or str(TESTS.parent / ".cache" / "pycache")
    environ.pop("PYTHONDONTWRITEBYTECODE", None)
    environ["PYTHONPYCACHEPREFIX"] = prefix
    sys.dont_write_bytecode = False
    sys.pycache_prefix = prefix


_keep_bytecode(os.environ)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(_CACHE, ignore_errors=True)
    shutil.rmtree(_DATA, ignore_errors=True)
    if sys.pycache_prefix:  # the bytecode of modules the tests wrote under the temp directory
        mirror = Path(sys.pycache_prefix) / Path(tempfile.gettempdir()).relative_to("/")
        shutil.rmtree(mirror, ignore_errors=True)


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
    "testing/test_cli.py::test_passing_project_exits_0",
    "testing/test_example_registry.py::test_every_example_tool_passes_its_cases",
    "testing/test_runner.py::test_background_cases_wait_for_the_worker_or_see_it_running",
    "testing/test_runner.py::test_every_fixture_case_passes",
    "testing/test_runner.py::test_the_users_run_history_is_never_touched",
}
# fixture → the prerequisite it needs (tests/prereqs.py); the fixtures' users need it too
FIXTURE_PREREQS = {"pg": "postgres", "mcp_node_tools": "node"}
SLOW_PREFIXES = ("test_bench", "test_readme")
SLOW_FIXTURES = {"http_server", "stdio_params", "run_serve", *FIXTURE_PREREQS}
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


# where helpers live whose calls are followed when looking for SLOW_CALLS
HELPER_ROOTS = (TESTS, TESTS.parent / "bench")


def _code_names(code: types.CodeType) -> Iterator[str]:
    """The global and attribute names ``code`` uses, nested functions and lambdas included."""
    yield from code.co_names
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_names(const)


class _Scanner:
    """Whether a function, class or fixture (or a helper under ``HELPER_ROOTS`` it uses, followed
    through calls) mentions one of ``SLOW_CALLS``; each object is read once per collection."""

    def __init__(self) -> None:
        self._known: dict[object, bool] = {}

    def mentions_slow_call(self, obj: object) -> bool:
        if obj in self._known:
            return self._known[obj]
        self._known[obj] = False  # a cycle of helpers adds nothing
        source = _source(obj)
        found = bool(source) and (
            any(call in source for call in SLOW_CALLS)
            or any(self.mentions_slow_call(used) for used in _helpers(obj))
        )
        self._known[obj] = found
        return found


def _source(obj: object) -> str:
    """``obj``'s source text ("" when there is none). A function's lines come from its code
    object's line numbers: ``inspect.getsource`` tokenizes each function to find where it ends,
    most of the marking's cost (it runs in each xdist worker's collection)."""
    if inspect.isfunction(obj):
        code = inspect.unwrap(obj).__code__
        lines = linecache.getlines(code.co_filename)
        if lines:
            return "".join(lines[code.co_firstlineno - 1 : _last_line(code)])
    try:
        return inspect.getsource(obj)  # type: ignore[arg-type]
    except (OSError, TypeError):
        return ""


def _last_line(code: types.CodeType) -> int:
    """The last line an instruction of ``code`` (nested functions included) starts on."""
    lines = [line for _, _, line in code.co_lines() if line is not None]
    nested = [_last_line(c) for c in code.co_consts if isinstance(c, types.CodeType)]
    return max([code.co_firstlineno, *lines, *nested])


@functools.cache
def _under_helper_roots(file: str) -> bool:
    return any(Path(file).resolve().is_relative_to(root) for root in HELPER_ROOTS)


def _is_helper(obj: object) -> bool:
    # the defining file from the code object or the module (inspect.getsourcefile is slow, and
    # this runs for every name every test uses)
    if inspect.isfunction(obj):
        file = obj.__code__.co_filename
    elif inspect.isclass(obj):
        file = getattr(sys.modules.get(obj.__module__), "__file__", None) or ""
    else:
        return False
    return bool(file) and _under_helper_roots(file)


def _helpers(obj: object) -> Iterator[object]:
    """The functions and classes under ``HELPER_ROOTS`` that ``obj``'s code names (a class: its
    methods; ``module.name``: ``name`` of a module ``obj`` imported)."""
    if inspect.isclass(obj):
        for value in vars(obj).values():
            if isinstance(value, (staticmethod, classmethod)):
                value = value.__func__
            elif isinstance(value, property):
                value = value.fget
            if inspect.isfunction(value):
                yield value
        return
    function = inspect.unwrap(obj)  # type: ignore[arg-type]
    code = getattr(function, "__code__", None)
    if code is None:
        return
    names = set(_code_names(code))
    for name in names:
        value = function.__globals__.get(name)
        if inspect.ismodule(value):
            candidates = [getattr(value, attr, None) for attr in names]
        else:
            candidates = [value]
        yield from (c for c in candidates if _is_helper(c))


def _fixture_functions(item: pytest.Item) -> Iterator[object]:
    """The functions of the fixtures ``item`` uses (the closest definition of each name)."""
    info = getattr(item, "_fixtureinfo", None)
    for name in getattr(item, "fixturenames", ()):
        definitions = info.name2fixturedefs.get(name, ()) if info is not None else ()
        if definitions:
            yield definitions[-1].func


@functools.cache
def _relative(path: Path) -> str | None:
    """``path`` relative to ``tests/`` (None outside it)."""
    resolved = path.resolve()
    return resolved.relative_to(TESTS).as_posix() if resolved.is_relative_to(TESTS) else None


def _is_slow(item: pytest.Item, scanner: _Scanner) -> bool:
    path = item.path
    relative = _relative(path)
    if relative is None:
        return False
    if relative in SLOW_MODULES or path.name.startswith(SLOW_PREFIXES):
        return True
    if f"{relative}::{getattr(item, 'originalname', item.name)}" in SLOW_TESTS:
        return True
    if item.get_closest_marker("requires") is not None:
        return True
    if SLOW_FIXTURES & set(getattr(item, "fixturenames", ())):
        return True
    function = getattr(item, "function", None)
    if function is not None and scanner.mentions_slow_call(function):
        return True
    return any(scanner.mentions_slow_call(f) for f in _fixture_functions(item) if _is_helper(f))


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Add the ``requires`` and ``slow`` markers by the rules in this module's docstring, and
    start the longest tests first (``LONG_FIRST``)."""
    scanner = _Scanner()
    for item in items:
        fixtures = set(getattr(item, "fixturenames", ()))
        for fixture, prerequisite in FIXTURE_PREREQS.items():
            if fixture in fixtures:
                item.add_marker(pytest.mark.requires(prerequisite))
        if item.get_closest_marker("slow") is None and _is_slow(item, scanner):
            item.add_marker(pytest.mark.slow)
    items.sort(key=_start_rank)


class _XdistGroups:
    """Make ``@pytest.mark.xdist_group`` work again. pytest-xdist (``--dist loadgroup``) puts a
    test of group ``g`` on the group's worker by renaming it ``...::test@g``; it writes the
    new name to ``item._nodeid``, which pytest 9.2 no longer reads (the id is ``item._id``), so
    every group was silently spread over the workers (a module-scoped fixture built on each).
    Does nothing where xdist's rename took effect."""

    @pytest.hookimpl(trylast=True)  # after xdist's own hook
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        for item in items:
            renamed = item.__dict__.get("_nodeid")
            if isinstance(renamed, str) and renamed != item.nodeid and hasattr(item, "_id"):
                from _pytest.nodeid import NodeId

                item._id = NodeId.parse(renamed)  # type: ignore[attr-defined]


def pytest_configure(config: pytest.Config) -> None:
    config.pluginmanager.register(_XdistGroups(), "toolctl-xdist-groups")


# The longest tests (node ids under tests/, prefixes), longest first: measured at 7 s or more
# each in full runs on 2 cores. pytest-xdist hands tests to its workers in collection order,
# so a long test collected near the end keeps one worker busy while the other sits idle (the
# run's tail); started first, they run beside the many short tests instead.
LONG_FIRST = (
    "store/test_fleet_faults.py::test_the_fault_table",
    "server/test_bench.py::test_bench_serve",
    "store/test_bench_store.py::test_bench_store",
    "server/test_node_clients.py::test_the_conformance_suite",
    "store/test_outages.py::",
    "contract/test_cli.py::test_the_sarif_multitool",
    "store/test_replicas.py::",
    "server/test_bench.py::test_bench_http",
    "search/test_bench_quality.py::",
    "contract/test_schemadiff_property.py::",
    "store/test_balancer.py::",
    "server/test_bench_auth.py::",
    "test_marking.py::test_a_missing_prerequisite",
    "testing/test_example_registry.py::",
    "foundation/test_bench_perf.py::",
    "server/test_protocols.py::",
    "server/test_node_clients.py::",
    "test_readme_run.py::",
)


def _start_rank(item: pytest.Item) -> int:
    """Where ``item`` starts: the tests of ``LONG_FIRST`` in its order, then the rest as
    collected (a stable sort keeps the collection order within each rank)."""
    nodeid = item.nodeid.removeprefix("tests/")
    for rank, prefix in enumerate(LONG_FIRST):
        if nodeid.startswith(prefix):
            return rank
    return len(LONG_FIRST)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: pytest.Item) -> None:
    """Skip (fail in CI) a test whose prerequisite is missing, before its fixtures run."""
    for marker in item.iter_markers("requires"):
        _need(marker.args[0])


def _need(prerequisite: str) -> None:
    # One line raises every such skip, with one reason per prerequisite: `pytest -ra` folds
    # them into one "SKIPPED [n] tests/conftest.py:LINE: reason" line each.
    problem = prereqs.missing(prerequisite)
    if problem is None:
        return
    if prereqs.required():
        pytest.fail(
            f"{problem} (required here: CI or TOOLCTL_REQUIRE_NODE_TOOLS is set)", pytrace=False
        )
    pytest.skip(problem)


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
