"""docs/projects.md: the tool it shows first (a trimmed tools.d/reverse.yaml) validates and runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from toolctl.cli.app import run

REPO = Path(__file__).resolve().parents[2]
PAGE = (REPO / "docs" / "projects.md").read_text("utf-8")


def test_the_first_tool_shown_validates_and_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    tool = re.findall(r"```yaml\n(.*?)```", PAGE, flags=re.S)[0]
    assert "name: reverse" in tool
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "reverse.yaml").write_text(tool, "utf-8")
    examples = REPO / "examples"
    (tmp_path / "toolctl.yaml").write_text(f"pythonPath: [{examples}]\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    assert run(["validate"]) == 0
    capsys.readouterr()
    assert run(["run", "reverse", "--input", '{"input": "hello"}', "--raw"]) == 0
    assert '"output": "olleh"' in capsys.readouterr().out
