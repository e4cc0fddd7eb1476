"""Every format's output, for every tool, is accepted by the provider's official SDK types."""

from __future__ import annotations

from typing import Any

import pytest

from tests.export.conftest import FORMATS
from tests.export.sdk import VALIDATORS, validate_mcp
from toolctl.export import export_result
from toolctl.registry import Registry

# Every option set a format has: each one must produce exports the SDKs accept.
VARIANTS: list[tuple[str, dict[str, Any]]] = [
    *[(fmt, {}) for fmt in FORMATS],
    *[(fmt, {"examples_in_description": True}) for fmt in FORMATS if fmt != "anthropic"],
    ("gemini", {"gemini_parameters": "openapi"}),
    ("mcp", {"mcp_protocol": "2026-07-28"}),
]
IDS = [
    f"{fmt}-{'-'.join(f'{k}={v}' for k, v in opts.items()) or 'default'}" for fmt, opts in VARIANTS
]

# (format, options, tool) exports that must be refused rather than validated.
EXPECTED_REFUSALS = {("gemini", "openapi", "render_tree")}  # recursion: OpenAPI form inlines


def _validate(fmt: str, opts: dict[str, Any], data: Any) -> None:
    if fmt == "mcp":
        validate_mcp(data, opts.get("mcp_protocol", "2025-11-25"))
    else:
        VALIDATORS[fmt](data)


def _check_each_tool(registry: Registry, fmt: str, opts: dict[str, Any]) -> None:
    for spec in registry.select():
        result = export_result(registry, fmt, names=[spec.name], **opts)
        key = (fmt, opts.get("gemini_parameters", ""), spec.name)
        if key in EXPECTED_REFUSALS:
            assert not result.ok and result.data is None
            continue
        assert result.ok, [d.format() for d in result.diagnostics]
        _validate(fmt, opts, result.data)


@pytest.mark.parametrize(("fmt", "opts"), VARIANTS, ids=IDS)
def test_fixture_tools_pass_the_sdk(fixtures: Registry, fmt: str, opts: dict[str, Any]) -> None:
    _check_each_tool(fixtures, fmt, opts)


@pytest.mark.parametrize(("fmt", "opts"), VARIANTS, ids=IDS)
def test_example_tools_pass_the_sdk(examples: Registry, fmt: str, opts: dict[str, Any]) -> None:
    _check_each_tool(examples, fmt, opts)


@pytest.mark.parametrize(("fmt", "opts"), VARIANTS, ids=IDS)
def test_whole_example_registry_in_one_request(
    examples: Registry, fmt: str, opts: dict[str, Any]
) -> None:
    result = export_result(examples, fmt, **opts)
    assert result.ok, [d.format() for d in result.diagnostics]
    _validate(fmt, opts, result.data)


@pytest.mark.parametrize("fmt", FORMATS)
def test_validators_reject_another_formats_shape(fixtures: Registry, fmt: str) -> None:
    """The validators are real: each rejects the export of a different format."""
    other = "anthropic" if fmt != "anthropic" else "openai"
    data = export_result(fixtures, other, names=["search_docs"]).data
    if fmt == "bedrock":
        data = {"toolConfig": data}
    with pytest.raises(Exception):  # noqa: B017 - each SDK raises its own error type
        _validate(fmt, {}, data)


def test_validators_catch_an_unknown_key(fixtures: Registry) -> None:
    data = export_result(fixtures, "mistral", names=["search_docs"]).data
    data["tools"][0]["function"]["input_examples"] = [{}]
    with pytest.raises(AssertionError, match="dropped keys"):
        VALIDATORS["mistral"](data)
    mcp = export_result(fixtures, "mcp", names=["search_docs"]).data
    mcp["tools"][0]["inputExamples"] = []
    with pytest.raises(AssertionError, match="unknown MCP keys"):
        validate_mcp(mcp)
