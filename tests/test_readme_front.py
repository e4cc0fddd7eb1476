"""The README's front door: its two commands, and the tool it shows first, really work."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
README = (REPO / "README.md").read_text("utf-8")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", README, flags=re.S)


def test_readme_opens_with_exactly_two_commands() -> None:
    before_first_heading = README.split("\n## ", 1)[0]
    commands = re.findall(r"```bash\n(.*?)```", before_first_heading, flags=re.S)
    assert len(commands) == 2
    assert all(len(c.strip().splitlines()) == 1 for c in commands)
    assert "toolctl validate" in commands[0]
    assert "pytest" in commands[1]


def test_ci_runs_the_readme_test_command_verbatim() -> None:
    second = re.findall(r"```bash\n(.*?)```", README, flags=re.S)[1].strip()
    ci = (REPO / ".ci" / "run").read_text("utf-8")
    assert second in ci.splitlines()


def test_the_first_tool_shown_is_the_one_init_writes(tmp_path: Path) -> None:
    """The tour's tool is exactly `toolctl init`'s (the tour test runs it)."""
    from toolctl.scaffold.project import init_files

    tool = _blocks("yaml")[0]
    assert tool == init_files(tmp_path)[tmp_path / "tools.d" / "greet.yaml"]
