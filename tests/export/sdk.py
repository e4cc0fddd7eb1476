"""Offline validation of exports against the providers' official SDK types.

Each validator follows provider-formats.md: unknown keys forbidden, strict typing (no coercion),
lazily validated iterables consumed, plus the checks the SDKs skip (name rules, root type, every
schema a valid JSON Schema, examples valid against their schema). A validator raises
AssertionError (or the SDK's ValidationError) when the export would be rejected.
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from toolctl.schema import check_schema, make_validator

OPENAI_DESCRIPTION_LIMIT = 1024  # observed API limit, not in the SDK types
NAME_RULES = {
    "openai": r"[a-zA-Z0-9_-]{1,64}",
    "openai-responses": r"[a-zA-Z0-9_-]{1,64}",
    "anthropic": r"[a-zA-Z0-9_-]{1,64}",
    "bedrock": r"[a-zA-Z0-9_-]{1,64}",
    "mistral": r"[a-zA-Z0-9_-]{1,64}",
    "gemini": r"[a-zA-Z_][a-zA-Z0-9_.-]{0,63}",
    "mcp": r"[A-Za-z0-9._-]{1,128}",
}


def _schema_ok(schema: Any, *, root_object: bool = True) -> None:
    problems = check_schema(schema)
    assert not problems, f"not a valid JSON Schema: {problems}"
    if root_object:
        assert isinstance(schema, dict) and schema.get("type") == "object", (
            f"root is not type: object: {schema!r}"
        )


def _names(fmt: str, names: list[str]) -> None:
    for name in names:
        assert re.fullmatch(NAME_RULES[fmt], name), f"{fmt}: bad tool name {name!r}"


def _typed_dicts(tools: list[Any], typed: Any) -> list[Any]:
    from pydantic import ConfigDict, TypeAdapter

    adapter = TypeAdapter(list[typed], config=ConfigDict(extra="forbid"))
    out: list[Any] = adapter.validate_python(tools, strict=True)
    for tool in out:  # Iterable fields are validated only when consumed
        for key in ("input_examples", "allowed_callers"):
            if key in tool:
                list(tool[key])
    return out


def _typed(value: Any, typed: Any) -> Any:
    from pydantic import ConfigDict, TypeAdapter

    # in a list: pydantic takes no config for a bare TypedDict
    adapter = TypeAdapter(list[typed], config=ConfigDict(extra="forbid"))  # type: ignore[valid-type]
    return adapter.validate_python([value], strict=True)[0]


def validate_openai(data: Any) -> None:
    from openai.types.chat import (
        ChatCompletionAllowedToolChoiceParam,
        ChatCompletionFunctionToolParam,
    )

    assert set(data) <= {"tools", "tool_choice"}
    if "tool_choice" in data:
        _typed(data["tool_choice"], ChatCompletionAllowedToolChoiceParam)
        list(data["tool_choice"]["allowed_tools"]["tools"])
    _typed_dicts(data["tools"], ChatCompletionFunctionToolParam)
    _names("openai", [t["function"]["name"] for t in data["tools"]])
    for t in data["tools"]:
        assert len(t["function"].get("description", "")) <= OPENAI_DESCRIPTION_LIMIT
        _schema_ok(t["function"]["parameters"])
        assert isinstance(t["function"]["strict"], bool)


def _responses_functions(tools: list[Any]) -> list[Any]:
    """The function tools of a Responses ``tools`` list, namespaces opened; every other entry
    (namespace, tool_search) checked against its own SDK type."""
    from openai.types.responses import NamespaceToolParam, ToolSearchToolParam

    functions = []
    for t in tools:
        if t["type"] == "namespace":
            _typed(t, NamespaceToolParam)
            assert re.fullmatch(NAME_RULES["openai-responses"], t["name"]), t["name"]
            assert t["tools"], f"empty namespace {t['name']}"
            functions.extend(t["tools"])
        elif t["type"] == "tool_search":
            _typed(t, ToolSearchToolParam)
        else:
            functions.append(t)
    return functions


def validate_openai_responses(data: Any) -> None:
    from openai.types.responses import FunctionTool, FunctionToolParam, ToolChoiceAllowedParam

    assert set(data) <= {"tools", "tool_choice"}
    if "tool_choice" in data:
        _typed(data["tool_choice"], ToolChoiceAllowedParam)
    tools = _responses_functions(data["tools"])
    if any(t.get("defer_loading") for t in tools):
        assert {"type": "tool_search"} in data["tools"], "deferred functions need tool_search"
    _typed_dicts(tools, FunctionToolParam)
    _names("openai-responses", [t["name"] for t in tools])
    for t in tools:
        assert len(t.get("description") or "") <= OPENAI_DESCRIPTION_LIMIT
        FunctionTool.model_validate(t, strict=True)
        _schema_ok(t["parameters"])
        if "output_schema" in t:
            _schema_ok(t["output_schema"], root_object=False)


def validate_anthropic(data: Any) -> None:
    from anthropic.types import (
        ToolParam,
        ToolSearchToolBm25_20251119Param,
        ToolSearchToolRegex20251119Param,
    )

    assert set(data) == {"tools"}
    search = [t for t in data["tools"] if str(t.get("type", "")).startswith("tool_search")]
    custom = [t for t in data["tools"] if t not in search]
    for t in search:
        _typed(t, ToolSearchToolBm25_20251119Param | ToolSearchToolRegex20251119Param)
    if any(t.get("defer_loading") for t in custom):
        assert len(search) == 1, "deferred tools need exactly one tool search tool"
        assert not all(t.get("defer_loading") for t in data["tools"]), "nothing up front"
    _typed_dicts(custom, ToolParam)
    _names("anthropic", [t["name"] for t in custom])
    for t in custom:
        _schema_ok(t["input_schema"])
        validator = make_validator(t["input_schema"])
        for example in t.get("input_examples", []):
            assert validator.is_valid(example), f"example {example} fails its input_schema"


def validate_gemini(data: Any) -> None:
    # google-genai has no Python 3.10 release; the test extra installs it on 3.11+ only.
    types = pytest.importorskip("google.genai.types")

    assert set(data) <= {"tools", "toolConfig"}
    if "toolConfig" in data:
        types.ToolConfig.model_validate(data["toolConfig"])
    decls = []
    for tool in data["tools"]:
        assert set(tool) == {"functionDeclarations"}
        types.Tool.model_validate(tool)  # every genai model forbids unknown keys
        decls.extend(tool["functionDeclarations"])
    _names("gemini", [d["name"] for d in decls])
    for d in decls:
        assert not ("parameters" in d and "parametersJsonSchema" in d)
        if "parametersJsonSchema" in d:
            _schema_ok(d["parametersJsonSchema"])
            # only keywords the SDK's JSONSchema type declares (it forbids the rest)
            types.JSONSchema.model_validate(d["parametersJsonSchema"])
        if "parameters" in d:
            assert d["parameters"]["type"] == "OBJECT"
            assert d["parameters"].get("properties"), "OBJECT parameters need properties"
        if "responseJsonSchema" in d:
            _schema_ok(d["responseJsonSchema"], root_object=False)


def validate_bedrock(data: Any) -> None:
    import botocore.session
    from botocore.validate import ParamValidator

    assert set(data) == {"toolConfig"}
    model = botocore.session.get_session().get_service_model("bedrock-runtime")
    report = ParamValidator().validate(data["toolConfig"], model.shape_for("ToolConfiguration"))
    assert not report.has_errors(), report.generate_report()
    specs = [t["toolSpec"] for t in data["toolConfig"]["tools"] if "toolSpec" in t]
    _names("bedrock", [s["name"] for s in specs])
    for s in specs:  # botocore skips max lengths and patterns
        assert len(s.get("description", "x")) >= 1
        _schema_ok(s["inputSchema"]["json"])


def validate_mistral(data: Any) -> None:
    from mistralai.client.models import Tool

    assert set(data) == {"tools"}
    for t in data["tools"]:
        model = Tool.model_validate(t, strict=True)
        # mistralai ignores unknown keys: a round trip that loses a key means one was unknown
        dumped = model.model_dump(by_alias=True, exclude_unset=True)
        assert dumped == t, f"mistral dropped keys: {dumped} != {t}"
        _schema_ok(t["function"]["parameters"])
    _names("mistral", [t["function"]["name"] for t in data["tools"]])


def validate_mcp(data: Any, protocol: str = "2025-11-25") -> None:
    import mcp.types
    from mcp.shared.tool_name_validation import validate_tool_name

    if protocol == "2025-11-25":
        import mcp_types._v2025_11_25 as wire
    else:
        import mcp_types._v2026_07_28 as wire  # type: ignore[no-redef]
    result = wire.ListToolsResult.model_validate(data, strict=False)
    # the wire models ignore unknown keys: a lossless round trip proves there were none
    dumped = result.model_dump(by_alias=True, exclude_unset=True, mode="json")
    assert dumped == data, f"unknown MCP keys: {dumped} != {data}"
    for t in data["tools"]:
        mcp.types.Tool.model_validate(t, strict=True)
        assert validate_tool_name(t["name"]).is_valid, t["name"]
        _schema_ok(t["inputSchema"])
        if "outputSchema" in t:
            _schema_ok(t["outputSchema"], root_object=protocol == "2025-11-25")
    _names("mcp", [t["name"] for t in data["tools"]])


VALIDATORS = {
    "openai": validate_openai,
    "openai-responses": validate_openai_responses,
    "anthropic": validate_anthropic,
    "gemini": validate_gemini,
    "bedrock": validate_bedrock,
    "mistral": validate_mistral,
    "mcp": validate_mcp,
}
