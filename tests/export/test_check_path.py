"""The check path (what ``lint`` calls) reports exactly what an export reports, copying nothing."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from tests.export.conftest import FORMATS
from tests.export.specs import make_spec
from toolctl.diagnostics import Diagnostic
from toolctl.export import export, export_result, get_exporter
from toolctl.export.base import ExportOptions, Findings
from toolctl.export.convert import convert
from toolctl.export.gemini import JSON_SCHEMA
from toolctl.export.strict import OPENAI_STRICT
from toolctl.registry import Registry

OPTION_SETS: list[dict[str, Any]] = [
    {},
    {"examples_in_description": True},
    {"gemini_parameters": "openapi"},
    {"mcp_protocol": "2026-07-28"},
    {"check": True},
    {"infos": False},
]


def _per_tool(diags: list[Diagnostic], name: str) -> list[Diagnostic]:
    return [d for d in diags if d.tool == name]


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("which", ["fixtures", "refused"])
def test_check_reports_exactly_what_export_reports(
    fmt: str, which: str, request: pytest.FixtureRequest
) -> None:
    registry: Registry = request.getfixturevalue(which)
    exporter = get_exporter(fmt)
    for opts in OPTION_SETS:
        for spec in registry.tools.values():
            exported = export_result([spec], fmt, names=[spec.name], **opts).diagnostics
            checked = exporter.check(spec, ExportOptions.from_kwargs(**opts))
            assert checked == _per_tool(exported, spec.name), (fmt, opts, spec.name)


@pytest.mark.parametrize("fmt", FORMATS)
def test_check_never_mutates_the_specs(refused: Registry, fixtures: Registry, fmt: str) -> None:
    specs = [*fixtures.tools.values(), *refused.tools.values()]
    before = copy.deepcopy([(s.raw, s.input_schema, s.output_schema) for s in specs])
    exporter = get_exporter(fmt)
    for spec in specs:
        exporter.check(spec, ExportOptions(examples_in_description=True))
    get_exporter(fmt).export(specs, ExportOptions())  # finish() too
    assert [(s.raw, s.input_schema, s.output_schema) for s in specs] == before


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_export_shares_nothing_with_the_specs(fixtures: Registry, fmt: str) -> None:
    """Editing the exported JSON (as a caller may) must never reach the declarations."""
    before = copy.deepcopy({n: (s.raw, s.input_schema) for n, s in fixtures.tools.items()})
    data = export(fixtures, fmt)

    def scribble(node: Any) -> None:
        if isinstance(node, dict):
            for value in list(node.values()):
                scribble(value)
            node["x-scribbled"] = True
        elif isinstance(node, list):
            for value in node:
                scribble(value)
            node.append("scribbled")

    scribble(data)
    assert {n: (s.raw, s.input_schema) for n, s in fixtures.tools.items()} == before
    assert json.dumps(export(fixtures, fmt)) != json.dumps(data)


def test_conversion_is_copy_on_write() -> None:
    """A subtree no step changes comes back as the same object; a changed one is a new one."""
    schema = {
        "type": "object",
        "properties": {
            "city": {"type": "string", "description": "City."},
            "when": {"type": "string", "const": "now"},
        },
        "required": ["city", "when"],
        "additionalProperties": False,
    }
    spec = make_spec(inputSchema=schema)
    out = Findings(spec, "test")
    same, ok = convert(spec.input_schema, JSON_SCHEMA, out, ("inputSchema",))
    assert ok
    assert same["properties"]["city"] is spec.input_schema["properties"]["city"]
    assert same["properties"]["when"] == {"type": "string", "enum": ["now"]}  # const to enum
    assert same is not spec.input_schema
    untouched = {"type": "object", "properties": {"city": {"type": "string"}}}
    spec = make_spec(inputSchema=untouched)
    result, _ = convert(spec.input_schema, JSON_SCHEMA, Findings(spec, "t"), ("inputSchema",))
    assert result is spec.input_schema
    strict, _ = convert(spec.input_schema, OPENAI_STRICT, Findings(spec, "t"), ("inputSchema",))
    assert strict["additionalProperties"] is False
    assert "additionalProperties" not in spec.input_schema


@pytest.mark.parametrize("fmt", FORMATS)
def test_without_infos_only_the_infos_are_left_out(fixtures: Registry, fmt: str) -> None:
    exporter = get_exporter(fmt)
    for spec in fixtures.tools.values():
        every = exporter.check(spec, ExportOptions(examples_in_description=False))
        fewer = exporter.check(spec, ExportOptions(infos=False))
        assert fewer == [d for d in every if d.severity.value != "info"], spec.name


def test_a_meta_override_is_judged_alike_by_check_and_export() -> None:
    # check leaves the contract digest out, except where providerOptions.mcp._meta meets it
    meta = {"dev.toolctl/contractDigest": "sha256:0"}
    spec = make_spec(
        "pinned", inputSchema={"type": "object"}, providerOptions={"mcp": {"_meta": meta}}
    )
    codes = [d.code for d in get_exporter("mcp").check(spec, ExportOptions())]
    assert codes == [d.code for d in export_result([spec], "mcp").diagnostics] == ["TX210"]
