"""The example registry served to the official Python SDK client, in both revisions: results
that tell the truth (a background run that succeeded is a success, with its toModelOutput
summary and structuredContent the listed outputSchema accepts)."""

# slow: these tests start server processes

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import anyio
import pytest

from toolctl.schema import make_validator

from .serve_helpers import stdio_params

pytestmark = pytest.mark.timeout(120)
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def examples(tmp_path: Path) -> Path:
    """A private copy of the example project (its run history stays in tmp)."""
    target = tmp_path / "project"
    target.mkdir()
    shutil.copy(ROOT / "toolctl.yaml", target)
    for folder in ("tools.d", "examples", "schema"):
        ignore = shutil.ignore_patterns("__pycache__", ".toolctl")
        shutil.copytree(ROOT / folder, target / folder, ignore=ignore)
    return target


def _call(project: Path, mode: str, name: str, arguments: dict[str, Any]) -> tuple[Any, Any]:
    from mcp import Client

    async def main() -> tuple[Any, Any]:
        async with Client(stdio_params(project), mode=mode) as c:
            listed = {t.name: t for t in (await c.list_tools()).tools}
            return listed[name], await c.call_tool(name, arguments)

    result: tuple[Any, Any] = anyio.run(main)
    return result


@pytest.mark.parametrize("mode", ["auto", "legacy"])
def test_a_background_run_that_succeeded_is_a_success(examples: Path, mode: str) -> None:
    tool, result = _call(examples, mode, "index_files", {"path": "examples/data/sample"})
    assert result.is_error is False
    # The model reads the toModelOutput summary, not a failure notice.
    assert result.content[0].text.startswith("3 files, 20 lines, 55 words")
    structured = result.structured_content
    assert structured["files"] == 3 and "largest" not in structured  # the transcript form
    assert tool.output_schema is not None
    assert make_validator(tool.output_schema).errors(structured) == []
