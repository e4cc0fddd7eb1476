"""The realistic benchmark registry (bench/corpus.py) loads cleanly, in both layouts, with what
makes it realistic: shared ``$ref``s bundled, examples checked, output schemas and annotations."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import toolctl
from tests.bench_helpers import BENCH

sys.path.insert(0, str(BENCH))
from corpus import write_corpus


@pytest.mark.parametrize("per_file", [1, 10])
def test_the_realistic_corpus_loads_with_its_refs_bundled(tmp_path: Path, per_file: int) -> None:
    registry = toolctl.load_project(write_corpus(tmp_path, 30, per_file))
    tools = list(registry)
    assert len(tools) == 30
    assert len(list((tmp_path / "tools.d").glob("*.yaml"))) == 30 // per_file
    with_refs = [t for t in tools if "$defs" in t.input_schema]
    assert len(with_refs) == 30  # every tool names at least one shared definition
    assert all(t.input_examples and t.output_schema for t in tools)
    assert any(t.annotations.get("readOnlyHint") for t in tools)


def test_the_same_arguments_write_the_same_bytes(tmp_path: Path) -> None:
    first = write_corpus(tmp_path / "a", 12, 4, seed=3)
    second = write_corpus(tmp_path / "b", 12, 4, seed=3)
    files = sorted(p.relative_to(first) for p in first.rglob("*.yaml"))
    assert files == sorted(p.relative_to(second) for p in second.rglob("*.yaml"))
    assert all((first / f).read_bytes() == (second / f).read_bytes() for f in files)


@pytest.mark.parametrize("per_file", [1, 10])
def test_the_held_out_corpus_loads_with_what_makes_it_another_shape(
    tmp_path: Path, per_file: int
) -> None:
    from corpus_heldout import write_corpus as write_heldout

    registry = toolctl.load_project(write_heldout(tmp_path, 40, per_file))
    tools = list(registry)
    assert len(tools) == 40
    assert all("$defs" in t.input_schema for t in tools)  # each names shared components
    texts = [p.read_text(encoding="utf-8") for p in (tmp_path / "tools.d").rglob("*.yaml")]
    for keyword in ("allOf", "oneOf", "anyOf", "dependentRequired", "writeOnly", "description: |"):
        assert any(keyword in text for text in texts), keyword
    # some tools have no examples or no output schema, the others have them checked
    assert any(not t.input_examples for t in tools) and any(t.input_examples for t in tools)
    assert any(t.output_schema is None for t in tools)


def test_a_held_out_example_that_breaks_its_schema_fails_validation(tmp_path: Path) -> None:
    from corpus_heldout import write_corpus as write_heldout

    root = write_heldout(tmp_path, 20, 20)
    path = next((root / "tools.d").glob("group_*.yaml"))
    text = path.read_text(encoding="utf-8")
    assert "inputExamples:\n  - input:\n" in text
    # every tool requires a field: an empty example breaks its schema
    path.write_text(text.replace("inputExamples:\n", "inputExamples:\n  - input: {}\n", 1))
    registry = toolctl.load_project(root, strict=False)  # examples are really checked
    assert [d.code for d in registry.diagnostics] == ["TC304"]
