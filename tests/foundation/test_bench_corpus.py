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
