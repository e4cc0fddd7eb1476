"""Large catalogs in the exports: ``loading``/``toolset`` compiled to each provider's mechanism
(Anthropic defer_loading + tool search, OpenAI Responses namespaces + tool_search, allowed-names
lists, one toolset at a time), checked against the providers' SDK types, and the up-front size."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import toolctl
from tests.cli_helpers import toolctl as run_toolctl
from tests.export.sdk import VALIDATORS
from toolctl.export import export, export_result
from toolctl.registry import Registry

CATALOG = Path(__file__).parent / "fixtures" / "catalog"
DEFERRED = {"get_invoice", "archive_logs"}


@pytest.fixture(scope="module")
def catalog() -> Registry:
    return toolctl.load_project(CATALOG, packs=False)


def _by_name(tools: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {t["name"]: t for t in tools if "name" in t}


def test_loading_comes_from_the_tool_then_its_toolset(catalog: Registry) -> None:
    from toolctl.catalog import loading_of

    loading = {s.name: loading_of(s, catalog.toolsets) for s in catalog}
    assert {n for n, v in loading.items() if v == "deferred"} == DEFERRED
    assert loading["pay_invoice"] == "eager"  # its own loading overrides the deferred toolset


@pytest.mark.parametrize("search", ["bm25", "regex"])
def test_anthropic_defers_and_lists_the_tool_search_tool(catalog: Registry, search: str) -> None:
    data = export(catalog, "anthropic", tool_search=search)
    VALIDATORS["anthropic"](data)
    tools = data["tools"]
    assert tools[-1] == {
        "type": f"tool_search_tool_{search}_20251119",
        "name": f"tool_search_tool_{search}",
    }
    deferred = {t["name"] for t in tools[:-1] if t.get("defer_loading") is True}
    assert deferred == DEFERRED
    assert all("defer_loading" not in t for t in tools[:-1] if t["name"] not in DEFERRED)


def test_anthropic_without_deferred_tools_lists_no_search_tool(catalog: Registry) -> None:
    data = export(catalog, "anthropic", names=["ping", "pay_invoice"])
    VALIDATORS["anthropic"](data)
    assert [t["name"] for t in data["tools"]] == ["pay_invoice", "ping"]


def test_an_unknown_tool_search_variant_is_refused(catalog: Registry) -> None:
    result = export_result(catalog, "anthropic", tool_search="fuzzy")
    assert result.data is None and [d.code for d in result.diagnostics] == ["TX100"]


def test_openai_responses_namespaces_deferred_functions_and_tool_search(
    catalog: Registry,
) -> None:
    data = export(catalog, "openai-responses")
    VALIDATORS["openai-responses"](data)
    tools = data["tools"]
    spaces = {t["name"]: t for t in tools if t["type"] == "namespace"}
    assert spaces["billing"]["description"] == "Invoices, payments and refunds."
    billing = _by_name(spaces["billing"]["tools"])
    assert billing["get_invoice"]["defer_loading"] is True
    assert "defer_loading" not in billing["pay_invoice"]
    assert list(_by_name(spaces["weather"]["tools"])) == ["current_weather"]
    top = _by_name([t for t in tools if t["type"] == "function"])
    assert set(top) == {"archive_logs", "ping"} and top["archive_logs"]["defer_loading"] is True
    assert tools[-1] == {"type": "tool_search"}


@pytest.mark.parametrize("fmt", ["openai", "openai-responses", "gemini"])
def test_allowed_toolsets_use_the_providers_allowed_names(catalog: Registry, fmt: str) -> None:
    data = export(catalog, fmt, allowed_toolsets=["weather"])
    VALIDATORS[fmt](data)
    if fmt == "gemini":
        config = data["toolConfig"]["functionCallingConfig"]
        assert config == {"mode": "VALIDATED", "allowedFunctionNames": ["current_weather"]}
        assert len(data["tools"][0]["functionDeclarations"]) == 5  # every tool still listed
    elif fmt == "openai":
        allowed = data["tool_choice"]["allowed_tools"]
        assert allowed["tools"] == [{"type": "function", "function": {"name": "current_weather"}}]
    else:
        choice = data["tool_choice"]
        assert choice["type"] == "allowed_tools" and choice["mode"] == "auto"
        assert choice["tools"] == [{"type": "function", "name": "current_weather"}]


@pytest.mark.parametrize("fmt", ["anthropic", "bedrock", "mistral", "mcp"])
def test_allowed_toolsets_are_refused_where_the_provider_has_no_such_list(
    catalog: Registry, fmt: str
) -> None:
    result = export_result(catalog, fmt, allowed_toolsets=["weather"])
    assert result.data is None and "TX121" in [d.code for d in result.diagnostics]


@pytest.mark.parametrize("fmt", ["gemini", "openai", "anthropic", "mcp"])
def test_one_toolset_exported_alone(catalog: Registry, fmt: str) -> None:
    data = export(catalog, fmt, toolsets=["billing"])
    VALIDATORS[fmt](data)
    if fmt == "gemini":
        names = [d["name"] for d in data["tools"][0]["functionDeclarations"]]
    elif fmt == "openai":
        names = [t["function"]["name"] for t in data["tools"]]
    else:
        names = [t["name"] for t in data["tools"] if "type" not in t or fmt == "mcp"]
    assert names == ["get_invoice", "pay_invoice"]


def test_an_unknown_toolset_option_names_the_declared_ones(catalog: Registry) -> None:
    result = export_result(catalog, "gemini", toolsets=["biling"])
    assert result.data is None
    (diag,) = result.diagnostics
    assert diag.code == "TX120" and "billing, weather" in (diag.hint or "")


def test_targets_without_deferral_send_everything_with_a_note(catalog: Registry) -> None:
    result = export_result(catalog, "gemini")
    assert result.ok and "TX225" in [d.code for d in result.diagnostics]
    assert len(result.data["tools"][0]["functionDeclarations"]) == 5


def test_the_cli_exports_a_toolset_and_allowed_names(capsys: pytest.CaptureFixture[str]) -> None:
    import json

    code, out, err = run_toolctl(
        capsys, "export", "gemini", "-r", str(CATALOG / "tools.d"), "--toolset", "weather"
    )
    assert code == 0, err
    names = [d["name"] for d in json.loads(out)["tools"][0]["functionDeclarations"]]
    assert names == ["current_weather"]
    code, out, err = run_toolctl(
        capsys, "export", "bedrock", "-r", str(CATALOG / "tools.d"), "--allowed-toolset", "weather"
    )
    assert code == 1 and "TX121" in err and "--toolset" in err and "Traceback" not in err
