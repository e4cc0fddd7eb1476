"""docs/coming-from.md maps Mastra `createTool()` and TanStack AI `toolDefinition()` fields to
toolctl YAML; every toolctl file it shows is one project, and each mapping the page states is
checked here against that project: loaded, run through the pipeline and exported."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml

import toolctl
from tests.docs.pages import (
    ROOT,
    assert_as_shown,
    environment,
    files,
    run_console,
    section,
    write_files,
)

PAGE = "coming-from.md"
# the toolctl key each row of the page's table maps a Mastra or TanStack AI field to
MAPPED_KEYS = {
    "name",
    "description",
    "inputSchema",
    "outputSchema",
    "handler",
    "strict",
    "toModelOutput",
    "transform",
    "requestContextSchema",
    "requireApproval",
    "suspendSchema",
    "resumeSchema",
    "mcp",
    "providerOptions",
    "inputExamples",
    "metadata",
    "hooks",
    "background",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("coming-from")
    write_files(section(PAGE, "coming-from"), root)
    return root


@pytest.fixture
def registry(project: Path) -> toolctl.Registry:
    return toolctl.load_project(project)


def _tools() -> dict[str, dict[str, object]]:
    shown = files(section(PAGE, "coming-from"))
    return {name: yaml.safe_load(text) for name, text in shown.items() if name.endswith(".yaml")}


def test_every_mapped_key_appears_in_an_example_on_the_page() -> None:
    used = {key for tool in _tools().values() for key in tool}
    assert used >= MAPPED_KEYS
    table = (ROOT / "docs" / PAGE).read_text("utf-8").split("## Field by field", 1)[1]
    for key in MAPPED_KEYS:
        assert f"`{key}" in table, f"the table has no row for {key}"


def test_the_seed_fields_are_all_in_the_table() -> None:
    table = (ROOT / "docs" / PAGE).read_text("utf-8").split("<!-- coming-from -->", 1)[0]
    mastra = [
        "id", "description", "inputSchema", "outputSchema", "strict", "toModelOutput",
        "transform", "suspendSchema", "resumeSchema", "requireApproval", "mcp.annotations",
        "mcp._meta", "requestContextSchema", "providerOptions", "inputExamples", "background",
        "execute", "context.requestContext", "context.abortSignal", "context.observe",
        "context.agent", "context.workflow", "context.mcp",
        "onInputStart", "onInputDelta", "onInputAvailable", "onOutput",
    ]  # fmt: skip
    tanstack = ["name", "description", "execute", "inputSchema", "outputSchema"]
    tanstack += ["needsApproval", "metadata"]
    for field in mastra + tanstack:
        assert f"`{field}" in table, field


def test_the_project_loads_without_a_diagnostic(registry: toolctl.Registry) -> None:
    assert registry.ok
    assert sorted(spec.name for spec in registry) == sorted(
        str(tool["name"]) for tool in _tools().values()
    )


def test_basics_input_and_output_are_validated(registry: toolctl.Registry) -> None:
    assert registry.call("reverse", {"input": "hello"}, store=False).output == {"output": "olleh"}
    refused = registry.call("reverse", {"input": 42}, store=False)
    assert refused.error is not None and refused.error.code == "invalid_input"


def test_strict_and_to_model_output(registry: toolctl.Registry) -> None:
    result = registry.call("get_weather", {"city": "Seattle", "units": "imperial"}, store=False)
    assert result.output["radarImageUrl"] == "https://example.com/radar/seattle.png"
    assert result.model_output == {
        "type": "content",
        "value": [
            {"type": "text", "text": "Seattle: 72F and sunny"},
            {"type": "image-url", "url": "https://example.com/radar/seattle.png"},
        ],
    }
    openai = registry.export("openai")["tools"]
    assert next(t for t in openai if t["function"]["name"] == "get_weather")["function"]["strict"]


def test_hooks_see_the_input_and_the_output(
    registry: toolctl.Registry, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="weather_tools")
    result = registry.call("get_weather", {"city": "Oslo", "units": "metric"}, store=False)
    logged = [r.getMessage() for r in caplog.records if r.name == "weather_tools"]
    assert logged[0] == f"call {result.run_id}: input {{'city': 'Oslo', 'units': 'metric'}}"
    assert logged[1].startswith("get_weather returned {'city': 'Oslo'")


def test_mcp_provider_options_examples_and_metadata(registry: toolctl.Registry) -> None:
    mcp = next(t for t in registry.export("mcp")["tools"] if t["name"] == "get_weather")
    assert mcp["annotations"]["readOnlyHint"] is True
    assert mcp["_meta"]["category"] == "weather"
    anthropic = next(t for t in registry.export("anthropic")["tools"] if t["name"] == "get_weather")
    assert anthropic["cache_control"] == {"type": "ephemeral"}
    assert anthropic["input_examples"] == [{"city": "Seattle", "units": "imperial"}]
    for target in ("openai", "anthropic", "gemini", "mcp"):
        assert "weather-team" not in json.dumps(registry.export(target))  # metadata stays home


def test_transform_and_request_context(registry: toolctl.Registry) -> None:
    call = {"customerId": "C0042", "internalPath": "/srv/crm"}
    result = registry.call("lookup_customer", call, context={"tenant": "eu"}, store=False)
    assert result.output["apiKey"] == "secret-value"  # the application gets the raw output
    assert result.display == {
        "input": {"customerId": "C0042"},
        "output": {"displayName": "Acme (eu)"},
    }
    assert result.transcript["input"] == {"customerId": "C0042"}
    without = registry.call("lookup_customer", call, store=False)
    assert without.error is not None and without.error.code == "invalid_context"
    assert without.display["error"] == "Customer lookup failed"


def test_approval_waits_for_a_decision(registry: toolctl.Registry) -> None:
    waiting = registry.call("delete_note", {"title": "draft"})
    assert waiting.status.value == "awaiting_approval" and waiting.output is None
    assert registry.approve(waiting.run_id).output == {"deleted": "draft"}
    declined = registry.call("delete_note", {"title": "draft"}, decline="not now")
    assert declined.status.value == "declined"


def test_suspend_and_resume(registry: toolctl.Registry) -> None:
    suspended = registry.call("book_slot", {"title": "Design review"})
    assert suspended.status.value == "suspended"
    assert suspended.suspend_payload == {"question": "Book 'Design review' on Friday at 10:00?"}
    assert registry.resume(suspended.run_id, {"confirm": True}).output == {"booked": True}


def test_a_client_tool_is_exported_but_never_run(registry: toolctl.Registry) -> None:
    names = [t["name"] for t in registry.export("anthropic")["tools"]]
    assert "pick_color" in names
    refused = registry.call("pick_color", {"prompt": "Your favourite?"}, store=False)
    assert refused.error is not None and refused.error.code == "no_handler"


@pytest.mark.slow  # the background run finishes in a detached worker process
@pytest.mark.timeout(120)
def test_a_background_tool_returns_at_once_and_finishes_later(
    registry: toolctl.Registry,
) -> None:
    spec = registry.get("export_report")
    assert spec.background and spec.background_timeout == 600
    started = registry.call("export_report", {"month": "2026-11"})
    assert started.status.value == "running"
    assert registry.wait(started.run_id).output == {"month": "2026-11", "rows": 3}


@pytest.mark.slow  # starts toolctl processes
@pytest.mark.timeout(180)
def test_the_page_runs_as_shown(tmp_path: Path) -> None:
    text = section(PAGE, "coming-from")
    write_files(text, tmp_path)
    assert_as_shown(run_console(text, tmp_path, environment()))
