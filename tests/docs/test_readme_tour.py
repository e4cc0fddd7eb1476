"""The README's five-minute tour (also on docs/getting-started.md) is real: every command
runs, in order, in an empty directory, through the installed `toolctl`, and prints what the
README shows."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from tests.test_readme_run import steps

ROOT = Path(__file__).resolve().parents[2]
PAGES = ["README.md", "docs/getting-started.md"]
TIMING = re.compile(r" in \d+\.\d+s")

pytestmark = pytest.mark.timeout(180)  # slow: starts toolctl processes


def tour(page: str) -> str:
    text = (ROOT / page).read_text("utf-8")
    return text.split("<!-- tour -->", 1)[1].split("<!-- /tour -->", 1)[0]


def test_the_getting_started_page_has_the_readme_tour() -> None:
    assert tour("README.md") == tour("docs/getting-started.md")


def test_the_tour_runs_as_shown(tmp_path: Path) -> None:
    section = tour("README.md")
    source = re.search(r"```python\n# (\S+)\n(.*?)```", section, re.S)
    assert source is not None
    (tmp_path / source.group(1)).write_text(source.group(2), "utf-8")
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    env.pop("FORCE_COLOR", None)
    ran = steps(section)
    assert [c.split()[:2] for c, _ in ran][:3] == [
        ["toolctl", "init"],
        ["toolctl", "validate"],
        ["toolctl", "test"],
    ]
    for command, shown in ran:
        done = subprocess.run(
            shlex.split(command), cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
        )
        actual = TIMING.sub(" in <t>", done.stdout + done.stderr).splitlines()
        assert actual == [TIMING.sub(" in <t>", line) for line in shown], command
        assert done.returncode == 0, command
