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


def test_the_readme_names_what_the_full_suite_needs_and_how_long_both_commands_take() -> None:
    section = README.split("## Running the tests\n", 1)[1].split("\n## ", 1)[0]
    for prerequisite in ("Python 3.10", "PostgreSQL", "runuser", "Node.js", "npm"):
        assert prerequisite in section
    assert "skipped with one summary line per missing" in section
    rows = [line for line in section.splitlines() if line.startswith("| `python -m pytest")]
    assert [row.split("`")[1] for row in rows] == [
        "python -m pytest",
        'python -m pytest -m "not slow"',
    ]
    assert all(re.search(r"\d+(\.\d+)? ?(s|min)\b", row) for row in rows)  # a measured time
