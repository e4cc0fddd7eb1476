"""Every main command's default path, in a fresh process as a user starts it, leaves pydantic
alone: Typer 0.29 imports it to coerce any option type ``cli/fastparams.py`` does not convert,
and importing it costs more than a small warm `validate`."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

HEAVY = ("pydantic",)
PROBE = """
import atexit, json, os, sys
watch = json.loads(os.environ["PROBE_WATCH"])
out = os.environ["PROBE_OUT"]
atexit.register(lambda: open(out, "w").write(json.dumps([m for m in watch if m in sys.modules])))
sys.argv = ["toolctl", *sys.argv[1:]]
from toolctl.cli import main
main()
"""
TOOL = """toolctl: 1
name: shout
description: Upper-case a text so that it reads as shouting in a chat transcript.
handler: shout_handlers:shout
inputSchema:
  type: object
  properties:
    text: {type: string, description: The text to upper-case.}
  required: [text]
  additionalProperties: false
tests:
  - name: upper
    input: {text: hi}
    output: HI
"""
COMMANDS = [
    ["validate"],
    ["lint"],
    ["list"],
    ["export", "-f", "openai"],
    ["export", "anthropic"],
    ["export", "mcp"],
    ["search", "upper-case a text"],
    ["lock"],
    ["diff"],
    ["run", "shout", "--input", '{"text": "hi"}'],
    ["test"],
]


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("startup")
    (root / "tools.d").mkdir()
    (root / "tools.d" / "shout.yaml").write_text(TOOL, encoding="utf-8")
    (root / "shout_handlers.py").write_text("def shout(args):\n    return args['text'].upper()\n")
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [.]\n", encoding="utf-8")
    return root


@pytest.mark.slow
@pytest.mark.xdist_group("startup-imports")  # in order on one worker: `diff` reads the lock
@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_a_command_imports_no_pydantic(project: Path, argv: list[str]) -> None:
    out = project / "loaded.json"
    env = {**os.environ, "PROBE_WATCH": json.dumps(HEAVY), "PROBE_OUT": str(out), "NO_COLOR": "1"}
    done = subprocess.run(
        [sys.executable, "-c", PROBE, *argv],
        cwd=project, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(out.read_text()) == [], f"toolctl {' '.join(argv)} imported it"
