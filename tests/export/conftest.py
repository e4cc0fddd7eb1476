"""Registries for the export tests: the repo's example registry and the tricky fixtures."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolctl
from toolctl.registry import Registry

HERE = Path(__file__).parent
REPO = HERE.parent.parent
FIXTURES = HERE / "fixtures" / "tools.d"
REFUSED = HERE / "fixtures" / "refused"
EXAMPLES = REPO / "tools.d"
FORMATS = ("openai", "openai-responses", "anthropic", "gemini", "bedrock", "mistral", "mcp")


@pytest.fixture(scope="session")
def fixtures() -> Registry:
    """Optional properties, nested objects, $ref chains, recursion, enums, nullable, no params."""
    return toolctl.load(FIXTURES, packs=False)


@pytest.fixture(scope="session")
def refused() -> Registry:
    """Declarations some targets must refuse (open maps, bad allOf, strict recursion, names)."""
    return toolctl.load(REFUSED, packs=False)


@pytest.fixture(scope="session")
def examples() -> Registry:
    """The example registry at the repository root."""
    if not EXAMPLES.is_dir():
        pytest.skip("the example registry tools.d/ is not in this checkout")
    return toolctl.load(EXAMPLES, packs=False)
