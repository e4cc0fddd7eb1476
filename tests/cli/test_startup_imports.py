"""Every main command's default path, in a fresh process as a user starts it, leaves pydantic
alone: Typer 0.29 imports it to coerce any option type ``cli/fastparams.py`` does not convert,
and importing it costs more than a small warm `validate`. A plain `lint`, `export` or `search`
imports no Typer at all, and a warm `search` not even the loader."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.cli_helpers import imported_by
from toolctl.cli import quick

HEAVY = ("pydantic",)
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
@pytest.mark.parametrize("argv", COMMANDS, ids=" ".join)
def test_a_command_imports_no_pydantic(project: Path, argv: list[str]) -> None:
    if argv[0] == "diff" and not (project / "toolctl.lock").exists():
        imported_by(["lock"], project, [])  # what diff compares the tools with
    watch = [*HEAVY, "typer"]
    if argv[0] == "search":  # warm: the kept index is checked by stat, no tool file loaded
        imported_by(argv, project, [])
        watch += ["toolctl.loader", "toolctl.diagnostics"]
    _, loaded = imported_by(argv, project, watch, {"NO_COLOR": "1"})
    # a plain lint, export or search takes the quick path (cli/quick.py): not even Typer
    allowed = [] if quick.parse(argv) is not None else ["typer"]
    assert [m for m in loaded if m not in allowed] == [], f"toolctl {' '.join(argv)} imported it"
