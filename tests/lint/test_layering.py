"""The lint core stays below the CLI: no typer, rich or mcp, and nothing imported from tools.d."""

from __future__ import annotations

import subprocess
import sys


def test_lint_core_imports_no_front_end_modules() -> None:
    code = (
        "import sys, toolctl.lint, toolctl.lint.engine, toolctl.lint.report\n"
        "from toolctl.lint import catalogue\n"
        "catalogue()\n"
        "bad = sorted(m for m in ('typer', 'rich', 'click', 'mcp') if m in sys.modules)\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""
