"""docs/security.md stays honest: every promise row names a test, and every test it names
exists (file, then function, or class and method). Parametrised tests are named without their
parameters. Several people add rows; this keeps each row pointing at something that runs."""

from __future__ import annotations

import ast
import functools
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "security.md"
NODE = re.compile(r"`(tests/[\w/.-]+\.py)::([\w:]+)(?:\[[^\]`]*\])?`")


def _tables(text: str) -> list[tuple[str, list[str]]]:
    """(header line, body rows) of every Markdown table in ``text``."""
    tables: list[tuple[str, list[str]]] = []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if lines[i].startswith("|") and i + 1 < len(lines) and lines[i + 1].startswith("|---"):
            header, body = lines[i], []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                body.append(lines[i])
                i += 1
            tables.append((header, body))
        else:
            i += 1
    return tables


@functools.cache
def _defined(path: str) -> frozenset[str]:
    """``name`` of each module-level function and ``Class::method`` of ``path``."""
    tree = ast.parse((ROOT / path).read_text("utf-8"))
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.ClassDef):
            names.update(
                f"{node.name}::{item.name}"
                for item in node.body
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
            )
    return frozenset(names)


def test_every_promise_row_names_a_test() -> None:
    promise_tables = [
        t
        for t in _tables(DOC.read_text("utf-8"))
        if "| test |" in t[0].lower() or "| held by |" in t[0].lower()
    ]
    assert len(promise_tables) >= 5  # the sections exist
    bare = [row for _, body in promise_tables for row in body if not NODE.search(row)]
    assert bare == [], "each promise names the test that holds it (`tests/x.py::test_y`)"


def test_every_named_test_exists() -> None:
    named = NODE.findall(DOC.read_text("utf-8"))
    assert named
    missing_files = sorted({path for path, _ in named if not (ROOT / path).is_file()})
    assert missing_files == []
    missing = [f"{path}::{name}" for path, name in named if name not in _defined(path)]
    assert missing == [], "docs/security.md names tests that do not exist"


def test_the_threat_model_sections_are_there() -> None:
    headings = set(re.findall(r"^## (.+)$", DOC.read_text("utf-8"), re.M))
    assert {"Assets", "Trust boundaries", "Where data leaves the process"} <= headings
    assert {"Secrets", "Resource limits", "$ref", "Caches", "Lock"} <= headings


def test_the_page_is_linked_from_the_readme_and_the_site() -> None:
    assert "(docs/security.md)" in (ROOT / "README.md").read_text("utf-8")
    assert "security.md" in (ROOT / "mkdocs.yml").read_text("utf-8")
