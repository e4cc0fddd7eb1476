"""Golden files: the exact export of the example registry (and the fixtures) in every format.

The files are what ``toolctl export F`` prints. After an intended change, regenerate
them and review the diff::

    TOOLCTL_UPDATE_GOLDEN=1 pytest tests/export/test_golden.py
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.export.conftest import FORMATS, HERE
from toolctl.export import export
from toolctl.registry import Registry

GOLDEN = HERE / "golden"
UPDATE = bool(os.environ.get("TOOLCTL_UPDATE_GOLDEN"))
VARIANTS: dict[str, tuple[str, dict[str, Any]]] = {
    **{fmt: (fmt, {}) for fmt in FORMATS},
    "gemini-openapi": ("gemini", {"gemini_parameters": "openapi"}),
    "mcp-2026-07-28": ("mcp", {"mcp_protocol": "2026-07-28"}),
}


def render(data: Any) -> str:
    """Exactly what the CLI prints with the default indent."""
    return json.dumps(data, indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _compare(path: Path, text: str) -> None:
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return
    assert path.is_file(), f"{path} is missing; regenerate with TOOLCTL_UPDATE_GOLDEN=1"
    assert text == path.read_text(encoding="utf-8"), (
        f"{path.name} changed; if intended: TOOLCTL_UPDATE_GOLDEN=1 pytest {__file__}"
    )


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_example_registry_golden(examples: Registry, variant: str) -> None:
    fmt, opts = VARIANTS[variant]
    _compare(GOLDEN / f"{variant}.json", render(export(examples, fmt, **opts)))


@pytest.mark.parametrize("fmt", FORMATS)
def test_fixture_registry_golden(fixtures: Registry, fmt: str) -> None:
    _compare(GOLDEN / "fixtures" / f"{fmt}.json", render(export(fixtures, fmt)))
