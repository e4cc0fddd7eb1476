"""The scaffold core stays below the CLI, and validation never pays for it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


# slow: each test starts a Python process (mark @pytest.mark.slow once the marker exists)
def _modules_after(code: str) -> set[str]:
    probe = code + "\nimport sys\nprint(','.join(sorted({m.split('.')[0] for m in sys.modules})))\n"
    out = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, check=True, cwd=REPO
    )
    return set(out.stdout.strip().split(","))


def test_scaffold_core_imports_no_front_end_modules() -> None:
    loaded = _modules_after(
        "import toolctl.scaffold.adapter, toolctl.scaffold.newtool, toolctl.scaffold.project\n"
        "from toolctl.scaffold import describe_function\n"
        "from tests.scaffold import corpus\n"
        "describe_function(corpus.register_customer)\n"
    )
    assert not loaded & {"typer", "rich", "click", "mcp"}
    assert "docstring_parser" in loaded  # the probe did parse docstrings


def test_validation_imports_neither_pydantic_nor_the_docstring_parser() -> None:
    # The core's validate path; the CLI layer is Typer's business (recent Typer releases
    # import pydantic to parse options).
    loaded = _modules_after("import toolctl\nassert toolctl.load_project('.').tools\n")
    assert "toolctl" in loaded
    assert not loaded & {"pydantic", "docstring_parser", "typing_inspection"}
