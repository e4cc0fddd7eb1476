"""Fixtures for the MCP server tests (skipped without the ``mcp`` extra)."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("mcp")

from .nodetools import NodeTools, node_tools
from .serve_helpers import copy_registry


@pytest.fixture(scope="session")
def mcp_node_tools() -> NodeTools:
    """Node 22, the MCP Inspector and the conformance suite, installed on first use; its users
    are slow and need npm (``tests/conftest.py``)."""
    return node_tools()


@pytest.fixture
def registry_dir(tmp_path: Path) -> Path:
    """A private copy of the test registry (its run history and edits stay in tmp)."""
    return copy_registry(tmp_path)
