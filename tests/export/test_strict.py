"""Strict-mode conversion: what OpenAI and Anthropic get, and what is refused and why."""

from __future__ import annotations

from typing import Any

from tests.export.specs import make_spec, obj
from toolctl.export import export_result
from toolctl.export.strict import from_strict_instance, to_strict_instance
from toolctl.registry import Registry
from toolctl.schema import make_validator


def _params(fmt: str, schema: dict[str, Any], **opts: Any) -> Any:
    result = export_result([make_spec(strict=True, inputSchema=schema)], fmt, **opts)
    assert result.ok, [d.format() for d in result.diagnostics]
    tool = result.data["tools"][0]
    return tool["function"]["parameters"] if "function" in tool else tool["input_schema"]


def _errors(fmt: str, schema: dict[str, Any], strict: bool = True) -> list[tuple[str, str]]:
    result = export_result([make_spec(strict=strict, inputSchema=schema)], fmt)
    assert result.data is None
    return [(d.code, d.pointer) for d in result.diagnostics if d.severity.value == "error"]


def test_openai_makes_optional_nullable_and_required() -> None:
    schema = obj(
        {"city": {"type": "string"}, "unit": {"type": "string", "enum": ["c", "f"]}}, ["city"]
    )
    params = _params("openai", schema)
    assert params == {
        "type": "object",
        "properties": {
            "city": {"type": "string"},
            "unit": {"type": ["string", "null"], "enum": ["c", "f", None]},
        },
        "required": ["city", "unit"],
        "additionalProperties": False,
    }


def test_anthropic_keeps_optional_properties_and_closes_objects() -> None:
    schema = obj({"a": {"type": "string"}, "b": obj({"c": {"type": "integer"}})}, ["a"])
    params = _params("anthropic", schema)
    assert params["required"] == ["a"]
    assert params["additionalProperties"] is False
    assert params["properties"]["b"]["additionalProperties"] is False
    assert "required" not in params["properties"]["b"]


def test_strict_does_not_touch_the_declaration() -> None:
    schema = obj({"a": {"type": "string"}}, [])
    spec = make_spec(strict=True, inputSchema=schema)
    export_result([spec], "openai")
    assert spec.input_schema == obj({"a": {"type": "string"}}, [])


def test_open_map_is_refused_with_its_path(refused: Registry) -> None:
    result = export_result(refused, "openai", names=["tag_items"])
    assert result.data is None
    [diag] = [d for d in result.diagnostics if d.severity.value == "error"]
    assert diag.code == "TX311"
    assert diag.pointer == "/inputSchema/properties/labels"
    assert "open object (additionalProperties)" in diag.message
    assert diag.line == 9 and diag.file.endswith("tools.yaml")


def test_free_form_nested_object_is_refused() -> None:
    schema = obj({"meta": {"type": "object"}}, ["meta"])
    assert _errors("openai", schema) == [("TX311", "/inputSchema/properties/meta")]
    assert _errors("anthropic", schema) == [("TX311", "/inputSchema/properties/meta")]


def test_unmergeable_all_of_is_refused(refused: Registry) -> None:
    result = export_result(refused, "anthropic", names=["merge_conflict"])
    codes = [(d.code, d.pointer) for d in result.diagnostics if d.severity.value == "error"]
    assert codes == [("TX310", "/inputSchema/properties/code/allOf")]
    assert "'pattern' differently" in result.diagnostics[0].message


def test_mergeable_all_of_becomes_one_object() -> None:
    schema = {
        "type": "object",
        "allOf": [obj({"a": {"type": "string"}}, ["a"]), obj({"b": {"type": "integer"}})],
    }
    params = _params("openai", schema)
    assert "allOf" not in params
    assert params["properties"] == {"a": {"type": "string"}, "b": {"type": ["integer", "null"]}}
    assert params["required"] == ["a", "b"]


def test_recursion_is_refused_by_anthropic_but_kept_by_openai(refused: Registry) -> None:
    anth = export_result(refused, "anthropic", names=["walk_tree"])
    assert [(d.code, d.pointer) for d in anth.diagnostics if d.severity.value == "error"] == [
        ("TX301", "/inputSchema/$defs/Node/properties/children/items/$ref")
    ]
    openai = export_result(refused, "openai", names=["walk_tree"])
    assert openai.ok
    params = openai.data["tools"][0]["function"]["parameters"]
    assert params["$defs"]["Node"]["properties"]["children"]["items"] == {"$ref": "#/$defs/Node"}
    assert params["$defs"]["Node"]["additionalProperties"] is False


def test_root_recursion_is_an_error_not_a_recursion_error() -> None:
    schema = obj({"next": {"$ref": "#"}, "value": {"type": "integer"}}, ["value"])
    result = export_result([make_spec(inputSchema=schema)], "gemini", gemini_parameters="openapi")
    assert [d.code for d in result.diagnostics if d.severity.value == "error"] == ["TX301"]


def test_ref_with_siblings_is_inlined_for_strict(fixtures: Registry) -> None:
    result = export_result(fixtures, "openai", names=["ship_parcel"])
    params = result.data["tools"][0]["function"]["parameters"]
    sender = params["properties"]["from"]
    assert sender["description"] == "Sender address."
    assert sender["properties"]["country"] == {"$ref": "#/$defs/Country"}
    assert params["properties"]["to"] == {"$ref": "#/$defs/Address"}
    size = params["$defs"]["Parcel"]["properties"]["size"]
    assert size == {"anyOf": [{"$ref": "#/$defs/Size"}, {"type": "null"}]}


def test_unsupported_keywords_are_dropped_with_a_warning_and_noted() -> None:
    schema = obj({"name": {"type": "string", "minLength": 2}}, ["name"])
    result = export_result([make_spec(strict=True, inputSchema=schema)], "anthropic")
    prop = result.data["tools"][0]["input_schema"]["properties"]["name"]
    assert prop == {"type": "string", "description": "{minLength: 2}"}
    [warn] = [d for d in result.diagnostics if d.severity.value == "warning"]
    assert (warn.code, warn.pointer) == ("TX302", "/inputSchema/properties/name/minLength")


def test_check_turns_lossy_steps_into_errors() -> None:
    schema = obj({"name": {"type": "string", "minLength": 2}}, ["name"])
    result = export_result([make_spec(strict=True, inputSchema=schema)], "anthropic", check=True)
    assert result.data is None
    assert [d.code for d in result.diagnostics if d.severity.value == "error"] == ["TX302"]


def test_one_of_is_loosened_to_any_of_with_a_warning(fixtures: Registry) -> None:
    spec = fixtures.get("send_message")
    strict = make_spec(strict=True, inputSchema=spec.input_schema)
    result = export_result([strict], "openai")
    params = result.data["tools"][0]["function"]["parameters"]
    assert "anyOf" in params["properties"]["channel"]
    assert any(d.code == "TX303" and "oneOf" in d.message for d in result.diagnostics)


def test_optional_nullable_property_warns_that_absent_and_null_merge() -> None:
    schema = obj({"note": {"type": ["string", "null"]}}, [])
    result = export_result([make_spec(strict=True, inputSchema=schema)], "openai")
    assert result.ok
    assert [d.code for d in result.diagnostics if d.severity.value == "warning"] == ["TX320"]


def test_openai_enum_limit_is_enforced() -> None:
    schema = obj({"k": {"type": "integer", "enum": list(range(1001))}}, ["k"])
    assert _errors("openai", schema) == [("TX330", "/inputSchema")]


def test_anthropic_request_limits_are_summed_over_strict_tools() -> None:
    schema = obj({f"p{i}": {"type": "string"} for i in range(13)}, [])
    specs = [make_spec(f"t{i}", strict=True, inputSchema=schema) for i in range(2)]
    result = export_result(specs, "anthropic")
    assert result.data is None
    assert [d.code for d in result.diagnostics if d.severity.value == "error"] == ["TX331"]
    assert "26 optional parameters" in result.diagnostics[-1].message


def test_any_value_cannot_be_strict() -> None:
    assert _errors("openai", obj({"x": {}}, ["x"])) == [("TX312", "/inputSchema/properties/x")]


def test_instance_mapping_round_trips() -> None:
    schema = obj({"a": {"type": "string"}, "b": obj({"c": {"type": "integer"}}, [])}, ["a"])
    assert to_strict_instance(schema, {"a": "x", "b": {}}) == {"a": "x", "b": {"c": None}}
    assert to_strict_instance(schema, {"a": "x"}) == {"a": "x", "b": None}
    assert from_strict_instance(schema, {"a": "x", "b": None}) == {"a": "x"}
    strict = _params("openai", schema)
    assert make_validator(strict).is_valid({"a": "x", "b": {"c": None}})


def test_array_without_items_and_root_any_of_are_refused() -> None:
    assert _errors("openai", obj({"xs": {"type": "array"}}, ["xs"])) == [
        ("TX312", "/inputSchema/properties/xs")
    ]
    root = {"type": "object", "anyOf": [obj({"a": {"type": "string"}}, ["a"])]}
    assert ("TX312", "/inputSchema/anyOf") in _errors("openai", root)


def test_extension_keywords_are_dropped_quietly() -> None:
    schema = obj({"region": {"type": "string", "x-mcp-header": "Region"}}, ["region"])
    result = export_result([make_spec(strict=True, inputSchema=schema)], "openai")
    assert result.data["tools"][0]["function"]["parameters"]["properties"]["region"] == {
        "type": "string"
    }
    assert [d.severity.value for d in result.diagnostics] == ["info"]


def test_each_format_module_has_a_check_function() -> None:
    from toolctl.export import anthropic, bedrock, gemini, mcp, mistral, openai, openai_responses
    from toolctl.export.base import ExportOptions

    spec = make_spec("a.b", strict=True, inputSchema=obj({"m": {"type": "object"}}, ["m"]))
    for module in (openai, openai_responses, anthropic, bedrock, mistral):
        codes = {d.code for d in module.check(spec, ExportOptions())}
        assert {"TX200", "TX311"} <= codes, module.__name__
    assert [d.code for d in mcp.check(spec, ExportOptions())] == []
    assert [d.code for d in gemini.check(spec, ExportOptions())] == ["TX222"]


def test_additional_properties_true_is_one_error() -> None:
    schema = obj({"a": {"type": "string"}}, ["a"], additionalProperties=True)
    assert _errors("anthropic", schema) == [("TX311", "/inputSchema")]


def test_items_true_cannot_be_strict() -> None:
    schema = obj({"xs": {"type": "array", "items": True}}, ["xs"])
    assert _errors("openai", schema) == [("TX312", "/inputSchema/properties/xs/items")]


def test_ref_fan_out_is_bounded_when_inlining() -> None:
    """Each level refers to the next twice: inlining would make 2**30 nodes."""
    defs: dict[str, Any] = {
        f"D{i}": obj({"a": {"$ref": f"#/$defs/D{i + 1}"}, "b": {"$ref": f"#/$defs/D{i + 1}"}})
        for i in range(30)
    }
    defs["D30"] = {"type": "string"}
    schema = {**obj({"x": {"$ref": "#/$defs/D0"}}), "$defs": defs}
    result = export_result([make_spec(inputSchema=schema)], "gemini", gemini_parameters="openapi")
    assert [d.code for d in result.diagnostics if d.severity.value == "error"] == ["TX330"]


def test_nesting_depth_limit() -> None:
    node: dict[str, Any] = {"type": "string"}
    for _ in range(11):
        node = obj({"n": node}, ["n"])
    assert _errors("openai", node) == [("TX330", "/inputSchema")]
