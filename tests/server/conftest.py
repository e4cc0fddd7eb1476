"""Fixtures for the MCP server tests (skipped without the ``mcp`` extra)."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("mcp")

from .nodetools import NodeTools, node_tools
from .serve_helpers import HttpServer, Served, copy_registry, http_server


@pytest.fixture(scope="session")
def mcp_node_tools() -> NodeTools:
    """Node 22, the MCP Inspector and the conformance suite, installed on first use; its users
    are slow and need npm (``tests/conftest.py``)."""
    return node_tools()


@pytest.fixture
def registry_dir(tmp_path: Path) -> Path:
    """A private copy of the test registry (its run history and edits stay in tmp)."""
    return copy_registry(tmp_path)


@pytest.fixture(scope="module")
def shared_registry(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A copy of the test registry for the tests of one module that share a server."""
    return copy_registry(tmp_path_factory.mktemp("shared"))


@pytest.fixture(scope="module")
def shared_http_server(shared_registry: Path) -> Iterator[HttpServer]:
    """One ``toolctl serve --transport http`` with the defaults, for the tests of a module that
    only send it requests and leave it serving (a server start costs about 2.5 s of CPU, most of
    it importing the MCP SDK). Mark those tests with one ``xdist_group``, so that one worker
    runs them all and starts the server once."""
    with http_server(shared_registry) as server:
        yield server


@pytest.fixture(scope="module")
def shared_stdio(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Callable[..., Served]]:
    """``shared_stdio(elicit=..., mode=...)``: a stdio server and SDK client (``Served``) for
    the tests of a module that only call tools on it, one per client kind, each on a registry
    copy of its own and started on first use. Mark those tests with one ``xdist_group``."""
    started: dict[tuple[bool, str], Served] = {}
    with contextlib.ExitStack() as stack:

        def get(*, elicit: bool, mode: str = "auto") -> Served:
            if (elicit, mode) not in started:
                registry = copy_registry(tmp_path_factory.mktemp("stdio"))
                served = Served(registry, elicit=elicit, mode=mode)
                started[elicit, mode] = stack.enter_context(served.running())
            return started[elicit, mode]

        yield get
