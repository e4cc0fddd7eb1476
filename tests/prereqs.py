"""What the full suite needs besides Python, and how a test says it needs it.

A test (or a fixture parameter) that needs a prerequisite carries ``@pytest.mark.requires(NAME)``;
``tests/conftest.py`` adds the marker by fixture (``pg`` → ``postgres``, ``mcp_node_tools`` →
``node``), marks such tests slow, and before each one checks the prerequisite. A missing one
skips every test that needs it with the same reason from the same line, so ``pytest -ra`` prints
one ``SKIPPED [n] ...`` line per missing prerequisite, each saying how to install it. In CI
(``CI`` or ``TOOLCTL_REQUIRE_NODE_TOOLS`` set: ``.ci/run`` installs everything) a missing
prerequisite fails the test instead.

``TOOLCTL_TEST_WITHOUT=postgres,node`` makes the suite behave as if those were missing (to try
the skip lines, or a fast run without them).
"""

from __future__ import annotations

import functools
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from bench import pgcluster

TESTS = Path(__file__).resolve().parent
NODE_DIR = TESTS / "node"
# Either variable makes a missing prerequisite an error: CI systems set CI=true, .ci/run sets
# TOOLCTL_REQUIRE_NODE_TOOLS (it installs PostgreSQL and the Node tools before the tests).
REQUIRED_ENVS = ("CI", "TOOLCTL_REQUIRE_NODE_TOOLS")


def required() -> bool:
    """Whether a missing prerequisite fails the run (CI) rather than skipping its tests."""
    return any(os.environ.get(name, "").lower() not in ("", "0", "false") for name in REQUIRED_ENVS)


def _hidden(name: str) -> bool:
    return name in os.environ.get("TOOLCTL_TEST_WITHOUT", "").replace(" ", "").split(",")


def _postgres() -> str | None:
    if pgcluster.binaries() is None or _hidden("postgres"):
        return (
            "PostgreSQL server binaries (initdb, pg_ctl) not found on PATH or in "
            "/usr/lib/postgresql/*/bin: install the `postgresql` package to run these tests"
        )
    if os.geteuid() == 0 and pgcluster.runuser() is None:
        return (
            "`runuser` not found on PATH or in /usr/sbin, /sbin (as root, PostgreSQL runs as the "
            "postgres user through it): install util-linux to run these tests"
        )
    return None


def _npm() -> str | None:
    if shutil.which("npm") is None or _hidden("node"):
        return "npm not found on PATH: install Node.js and npm to run these tests"
    return None


def _tests_node() -> str | None:
    if (
        shutil.which("node") is None
        or not (NODE_DIR / "node_modules").is_dir()
        or _hidden("tests-node")
    ):
        return "the reference Node tools are not installed: run `npm ci --prefix tests/node`"
    return None


def _haproxy() -> str | None:
    if shutil.which("haproxy") is None or _hidden("haproxy"):
        return "haproxy not found on PATH: install the `haproxy` package to run these tests"
    return None


# name → a check that returns why the prerequisite is missing (None: present)
CHECKS: dict[str, Callable[[], str | None]] = {
    "postgres": _postgres,
    # Node 22, the MCP Inspector and the conformance suite: installed by npm on first use
    # (tests/server/nodetools.py), so npm is what must be there
    "node": _npm,
    # the SARIF Multitool and the YAML 1.2 parser of tests/node (npm ci --prefix tests/node)
    "tests-node": _tests_node,
    # the load balancer of docs/deploy/haproxy.cfg, checked and run for real
    "haproxy": _haproxy,
}


@functools.cache
def missing(name: str) -> str | None:
    """Why prerequisite ``name`` is missing, or None; checked once per session."""
    return CHECKS[name]()
