"""The documentation site builds with `mkdocs build --strict` (every page in the nav, no broken
link or anchor), and what the docs repeat stays in step with its source."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


# slow: builds the whole site in a subprocess
@pytest.mark.timeout(180)
def test_mkdocs_build_strict(tmp_path: Path) -> None:
    pytest.importorskip("material", reason="the docs extra (mkdocs-material) is not installed")
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "s")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=170,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
    )
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "s" / "new" / "index.html").is_file()


def test_every_page_is_in_the_nav() -> None:
    nav = (ROOT / "mkdocs.yml").read_text("utf-8")
    pages = sorted(p.name for p in (ROOT / "docs").glob("*.md"))
    missing = [p for p in pages if f"- {p}" not in nav and f": {p}" not in nav]
    assert missing == [], "add these pages to the nav in mkdocs.yml"


def _exit_table(text: str) -> str:
    section = text.split("## Exit codes\n", 1)[1]
    return "\n".join(line for line in section.splitlines() if line.startswith("|"))


def test_the_exit_code_tables_agree() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    cli = (ROOT / "docs" / "cli.md").read_text("utf-8")
    assert _exit_table(readme) == _exit_table(cli)


def test_the_readme_links_only_to_files_that_exist() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    targets = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", readme)
    assert targets
    missing = [t for t in targets if "://" not in t and not (ROOT / t).exists()]
    assert missing == []


def test_the_serve_page_shows_the_client_script() -> None:
    page = (ROOT / "docs" / "serve.md").read_text("utf-8")
    shown = page.split("## A Python client", 1)[1]
    code = re.search(r"```python\n(.*?)```", shown, re.S)
    assert code is not None
    script = (ROOT / "docs" / "examples" / "mcp-client" / "client.py").read_text("utf-8")
    assert code.group(1) in script


def test_every_json_block_of_the_docs_parses() -> None:
    import json

    blocks = [
        (page.name, block)
        for page in sorted((ROOT / "docs").glob("*.md"))
        for block in re.findall(r"```json\n(.*?)```", page.read_text("utf-8"), re.S)
    ]
    assert len(blocks) >= 3
    for name, block in blocks:
        try:
            json.loads(block)  # a client configuration a user pastes must be valid JSON
        except ValueError as exc:
            pytest.fail(f"docs/{name}: a json block does not parse: {exc}")
