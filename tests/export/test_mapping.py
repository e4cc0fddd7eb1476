"""Field mapping: provider options, examples, selection, names, MCP fields, determinism."""

from __future__ import annotations

import copy
import json

import pytest

from tests.export.conftest import FORMATS
from tests.export.sdk import validate_mcp
from tests.export.specs import make_spec
from toolctl.errors import ExportError
from toolctl.export import export, export_result
from toolctl.registry import Registry


def _one(registry: Registry, fmt: str, name: str, **opts: object) -> dict:
    data = export(registry, fmt, names=[name], **opts)
    if fmt == "bedrock":
        return data["toolConfig"]["tools"]
    if fmt == "gemini":
        return data["tools"][0]["functionDeclarations"][0]
    return data["tools"][0]


def test_provider_options_go_to_their_provider_only(fixtures: Registry) -> None:
    assert _one(fixtures, "anthropic", "get_weather")["cache_control"] == {"type": "ephemeral"}
    assert _one(fixtures, "openai-responses", "get_weather")["defer_loading"] is True
    assert _one(fixtures, "gemini", "get_weather")["behavior"] == "BLOCKING"
    assert _one(fixtures, "mcp", "get_weather")["execution"] == {"taskSupport": "optional"}
    bedrock = _one(fixtures, "bedrock", "get_weather")
    assert bedrock[1] == {"cachePoint": {"type": "default"}}
    assert "cachePoint" not in bedrock[0]["toolSpec"]
    for fmt in ("openai", "mistral"):
        text = json.dumps(export(fixtures, fmt, names=["get_weather"]))
        for key in ("cache_control", "defer_loading", "behavior", "cachePoint", "execution"):
            assert key not in text, (fmt, key)


def test_provider_options_cannot_override_generated_fields() -> None:
    spec = make_spec(providerOptions={"anthropic": {"input_schema": {"type": "object"}}})
    result = export_result([spec], "anthropic")
    assert result.data is None
    assert [(d.code, d.pointer) for d in result.diagnostics] == [
        ("TX210", "/providerOptions/anthropic/input_schema")
    ]


def test_provider_option_repeating_a_generated_value_is_ignored() -> None:
    spec = make_spec(providerOptions={"openai": {"strict": False}})
    result = export_result([spec], "openai-responses")
    assert result.ok and result.data["tools"][0]["strict"] is False


def test_unknown_provider_option_is_merged_with_a_warning() -> None:
    spec = make_spec(providerOptions={"openai": {"future_flag": 1}})
    result = export_result([spec], "openai")
    assert result.data["tools"][0]["function"]["future_flag"] == 1
    assert [d.code for d in result.diagnostics] == ["TX211"]


def test_examples_become_anthropic_input_examples(fixtures: Registry) -> None:
    tool = _one(fixtures, "anthropic", "search_docs")
    assert tool["input_examples"] == [
        {"query": "install"},
        {"query": "strict mode", "limit": 5, "sort": "date"},
    ]


def test_examples_in_description_on_request(fixtures: Registry) -> None:
    plain = _one(fixtures, "gemini", "search_docs")
    assert plain["description"] == "Search the documentation."
    tool = _one(fixtures, "openai", "search_docs", examples_in_description=True)
    # strict OpenAI: the examples show what the model sends, nulls included
    assert tool["function"]["description"] == (
        "Search the documentation.\n\nExamples:\n"
        '- {"query": "install", "limit": null, "sort": null, "exact": null}\n'
        '- {"query": "strict mode", "limit": 5, "sort": "date", "exact": null} (newest first)'
    )


def test_disabled_tools_are_left_out_and_tags_select(fixtures: Registry) -> None:
    for fmt in FORMATS:
        text = json.dumps(export(fixtures, fmt))
        assert "legacy_report" not in text
    shop = export(fixtures, "openai", tags=["shop"])
    assert [t["function"]["name"] for t in shop["tools"]] == ["create_order", "ship_parcel"]
    picked = export(fixtures, "mcp", names=["ping", "get_time"])
    assert [t["name"] for t in picked["tools"]] == ["get_time", "ping"]


def test_name_rules_per_target(refused: Registry) -> None:
    for fmt in ("openai", "openai-responses", "anthropic", "bedrock", "mistral"):
        with pytest.raises(ExportError) as info:
            export(refused, fmt, names=["admin.tools.list"])
        [diag] = info.value.diagnostics
        assert diag.code == "TX200" and "'admin.tools.list'" in diag.message
        assert "[a-zA-Z0-9_-]{1,64}" in diag.message
    for fmt in ("mcp", "gemini"):
        assert export(refused, fmt, names=["admin.tools.list"])


def test_mcp_fields(fixtures: Registry) -> None:
    tool = _one(fixtures, "mcp", "get_weather")
    assert list(tool) == [
        "name",
        "title",
        "description",
        "inputSchema",
        "outputSchema",
        "annotations",
        "icons",
        "_meta",
        "execution",
    ]
    assert tool["annotations"]["readOnlyHint"] is True
    from toolctl.contract import contract_digest

    digest = contract_digest(fixtures.get("get_weather"))
    assert tool["_meta"] == {
        "com.example/owner": "team-weather",
        "dev.toolctl/contractDigest": digest,
    }
    newer = export(fixtures, "mcp", mcp_protocol="2026-07-28", names=["get_weather"])
    assert newer["resultType"] == "complete" and "execution" not in newer["tools"][0]


def test_mcp_2025_drops_a_non_object_output_schema() -> None:
    spec = make_spec(outputSchema={"type": "array", "items": {"type": "string"}})
    old = export_result([spec], "mcp")
    assert "outputSchema" not in old.data["tools"][0]
    assert [d.code for d in old.diagnostics] == ["TX223"]
    new = export_result([spec], "mcp", mcp_protocol="2026-07-28")
    assert new.data["tools"][0]["outputSchema"]["type"] == "array"


@pytest.mark.parametrize("protocol", ["2025-11-25", "2026-07-28"])
def test_a_background_tool_is_task_capable_where_the_protocol_has_tasks(protocol: str) -> None:
    """``toolctl serve`` answers task-augmented calls of a background tool: MCP 2025-11-25 says
    so with ``execution``; the newer protocol has no such field, and nothing is reported."""
    spec = make_spec("tally", background=True, handler="m:f")
    result = export_result([spec], "mcp", mcp_protocol=protocol)
    validate_mcp(result.data, protocol)  # the MCP SDK's own types
    tool = result.data["tools"][0]
    if protocol == "2025-11-25":
        assert tool["execution"] == {"taskSupport": "optional"}
    else:
        assert "execution" not in tool
    assert result.diagnostics == []
    plain = export_result([make_spec("tally")], "mcp", mcp_protocol=protocol)
    assert "execution" not in plain.data["tools"][0]


def test_gemini_openapi_form(fixtures: Registry) -> None:
    decl = _one(fixtures, "gemini", "update_profile", gemini_parameters="openapi")
    props = decl["parameters"]["properties"]
    assert props["nickname"] == {"type": "STRING", "nullable": True}
    assert props["age"] == {"type": "INTEGER", "minimum": 0, "nullable": True}
    ship = _one(fixtures, "gemini", "ship_parcel", gemini_parameters="openapi")
    assert "$ref" not in json.dumps(ship)
    no_args = _one(fixtures, "gemini", "get_time", gemini_parameters="openapi")
    assert "parameters" not in no_args  # Gemini rejects an OBJECT without properties


def test_responses_output_schema(fixtures: Registry) -> None:
    tool = _one(fixtures, "openai-responses", "get_weather")
    assert tool["output_schema"]["required"] == ["temperature"]


@pytest.mark.parametrize("fmt", FORMATS)
def test_exports_are_deterministic_and_pure(fixtures: Registry, fmt: str) -> None:
    before = copy.deepcopy({n: (s.raw, s.input_schema) for n, s in fixtures.tools.items()})
    first = json.dumps(export(fixtures, fmt))
    assert json.dumps(export(fixtures, fmt)) == first
    assert {n: (s.raw, s.input_schema) for n, s in fixtures.tools.items()} == before


def test_registry_export_forwards(fixtures: Registry) -> None:
    assert fixtures.export("openai", names=["ping"]) == export(fixtures, "openai", names=["ping"])


def test_unknown_format_and_bad_options() -> None:
    with pytest.raises(ExportError, match="unknown export format 'nope'"):
        export([], "nope")
    with pytest.raises(ExportError, match="protocol"):
        export([], "mcp", mcp_protocol="1999-01-01")
    with pytest.raises(ExportError, match="Gemini parameters form"):
        export([], "gemini", gemini_parameters="xml")
    with pytest.raises(ExportError, match="at least one"):
        export([], "bedrock")


def test_an_empty_selection_warns(fixtures: Registry) -> None:
    result = export_result(fixtures, "openai", tags=["no-such-tag"])
    assert result.data == {"tools": []}
    assert [(d.severity.value, d.code) for d in result.diagnostics] == [("warning", "TX110")]
    result = export_result(fixtures, "bedrock", tags=["no-such-tag"])
    assert result.data is None  # Converse rejects an empty toolConfig.tools
    [diag] = result.diagnostics
    assert (diag.severity.value, diag.code) == ("error", "TX110")
    assert diag.message == "Bedrock: no tools selected; toolConfig.tools needs at least one"


def test_draft7_definitions_reach_gemini_as_defs() -> None:
    schema = {
        "type": "object",
        "properties": {"p": {"$ref": "#/definitions/P"}},
        "definitions": {"P": {"type": "string"}},
    }
    decl = export([make_spec(inputSchema=schema)], "gemini")["tools"][0]["functionDeclarations"][0]
    assert decl["parametersJsonSchema"]["properties"]["p"] == {"$ref": "#/$defs/P"}
    assert decl["parametersJsonSchema"]["$defs"] == {"P": {"type": "string"}}


def test_a_named_disabled_tool_is_exported(fixtures: Registry) -> None:
    assert [t["name"] for t in export(fixtures, "mcp", names=["legacy_report"])["tools"]] == [
        "legacy_report"
    ]


def test_gemini_reads_google_and_gemini_options() -> None:
    spec = make_spec(providerOptions={"gemini": {"behavior": "NON_BLOCKING"}})
    decl = export([spec], "gemini")["tools"][0]["functionDeclarations"][0]
    assert decl["behavior"] == "NON_BLOCKING"
    chat = export([make_spec(providerOptions={"openai": {"x": 1}})], "openai-responses")
    assert chat["tools"][0]["x"] == 1


def test_check_one_tool_for_a_format(refused: Registry) -> None:
    from toolctl.export import check

    codes = [d.code for d in check(refused.get("tag_items"), "openai")]
    assert codes == ["TX311"]
    assert check(refused.get("admin.tools.list"), "mcp") == []
    assert [d.code for d in check(refused.get("admin.tools.list"), "bedrock")] == ["TX200"]
