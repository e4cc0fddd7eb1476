"""The MCP client example (docs/examples/mcp-client/client.py) works against `toolctl serve`
over stdio, in a project made by `toolctl init`: the output is what docs/serve.md shows."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from toolctl.cli.app import run as cli

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "examples" / "mcp-client" / "client.py"

pytestmark = pytest.mark.timeout(120)  # slow: starts the client and a server process


def _run(project: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
    }
    return subprocess.run(
        [sys.executable, str(SCRIPT), str(project), *args],
        capture_output=True,
        text=True,
        timeout=100,
        env=env,
    )


@pytest.fixture
def project(tmp_path: Path) -> Path:
    pytest.importorskip("mcp")
    assert cli(["init", str(tmp_path)]) == 0
    return tmp_path


def test_the_client_prints_what_the_page_shows(project: Path) -> None:
    page = (ROOT / "docs" / "serve.md").read_text("utf-8")
    match = re.search(
        r"\$ python docs/examples/mcp-client/client.py \. (.*?)\n(.*?)```", page, re.S
    )
    assert match is not None
    args = shlex.split(match.group(1))
    done = _run(project, *args)
    assert done.returncode == 0, done.stderr
    assert done.stdout == match.group(2)


def test_a_tool_error_reaches_the_client_as_an_error(project: Path) -> None:
    done = _run(project, "greet", '{"language": "fr"}')
    assert done.returncode == 1
    assert "'name' is a required property" in done.stdout
