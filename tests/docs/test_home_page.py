"""The docs home page (docs/index.md) is real: its tool file and handler, written into an empty
directory, give exactly the output its `validate`, `run` and `export` commands show."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs.pages import (
    ROOT,
    assert_as_shown,
    environment,
    files,
    project_metadata,
    run_console,
    section,
    write_files,
)


@pytest.mark.slow  # starts toolctl processes
@pytest.mark.timeout(180)
def test_the_home_page_runs_as_shown(tmp_path: Path) -> None:
    home = section("index.md", "home")
    written = write_files(home, tmp_path)
    assert sorted(written) == ["text_tools.py", "tools.d/count_words.yaml"]
    results = run_console(home, tmp_path, environment())
    assert [c.split()[:2] for c, _, _ in results] == [
        ["toolctl", "validate"],
        ["toolctl", "run"],
        ["toolctl", "run"],
        ["toolctl", "export"],
    ]
    assert_as_shown(results)


def test_the_home_page_sells_it_in_one_screen() -> None:
    page = (ROOT / "docs" / "index.md").read_text("utf-8")
    home = section("index.md", "home")
    tool = files(home)["tools.d/count_words.yaml"]
    assert len(tool.splitlines()) <= 16  # a short tool file, not a tour of the format
    assert "pip install" in page.split("<!-- home -->", 1)[0]  # install before the example
    for page_link in ("getting-started.md", "coming-from.md", "format.md", "cli.md"):
        assert f"({page_link}" in page


def test_the_install_line_names_the_projects_repository() -> None:
    project = project_metadata()
    page = (ROOT / "docs" / "index.md").read_text("utf-8")
    source = project["urls"]["Source"]
    assert f"'{project['name']}[mcp] @ git+{source}'" in page
