"""Streaming an export (what ``toolctl export`` writes): the same text as the whole data through
``json.dumps``, byte for byte, without holding every tool's entries; nothing on a refusal."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest

import toolctl
from tests.export.conftest import FORMATS, HERE
from toolctl.export import export, export_result
from toolctl.export.stream import Spooled, write_export
from toolctl.registry import Registry

OPTIONS: list[dict[str, Any]] = [
    {},
    {"gemini_parameters": "openapi"},
    {"mcp_protocol": "2026-07-28"},
]


@pytest.fixture(scope="module")
def catalog() -> Registry:
    """Deferred tools and toolsets: Anthropic's search tool, openai-responses namespaces."""
    return toolctl.load_project(HERE / "fixtures" / "catalog")


@pytest.mark.parametrize("fmt", FORMATS)
def test_the_stream_is_what_json_dumps_gives(
    fmt: str, fixtures: Registry, examples: Registry, catalog: Registry
) -> None:
    cases = [(r, o, i) for r in (fixtures, catalog) for o in OPTIONS[:1] for i in (2, None)]
    cases += [(examples, o, i) for o in OPTIONS for i in (3, None)]
    for registry, opts, indent in cases:
        whole = export_result(registry, fmt, **opts)
        out = io.StringIO()
        result = write_export(registry, fmt, out, indent=indent, **opts)
        assert result.data is None and result.diagnostics == whole.diagnostics
        if not whole.ok:  # (gemini's OpenAPI form refuses the recursive fixture)
            assert out.getvalue() == ""
            continue
        want = json.dumps(whole.data, indent=indent, ensure_ascii=False)
        assert out.getvalue() == want + "\n"


def test_a_refused_export_writes_nothing(refused: Registry) -> None:
    out = io.StringIO()
    result = write_export(refused, "openai", out, indent=2)
    assert not result.ok and out.getvalue() == ""
    assert result.diagnostics == export_result(refused, "openai").diagnostics


def test_the_export_holds_stand_ins_not_entries(fixtures: Registry) -> None:
    """What the result keeps of each tool while the export runs: its top-level scalars (what a
    request wrapper reads), never its schemas: those are in the spool."""
    from toolctl.export import export_selected
    from toolctl.export.stream import _Spool

    spool = _Spool(None)
    try:
        result = export_selected(fixtures, "mcp", None, None, None, spool.keep, {})
        entries = result.data["tools"]
        assert entries and all(type(e) is Spooled for e in entries)
        assert all("inputSchema" not in e and "name" in e for e in entries)
        first = json.loads(spool.text(entries[0]))
        assert first == export(fixtures, "mcp")["tools"][0]
    finally:
        spool.file.close()
