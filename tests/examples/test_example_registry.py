"""The example registry in tools.d/: well-formed, complete, and a showcase of every format field."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from toolctl import ToolSpec, yamlsrc
from toolctl.loader import load_registry
from toolctl.spec import HOOK_NAMES, PHASES, TARGETS, format_schema

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools.d"
MODELINE = "# yaml-language-server: $schema=../schema/tool.v1.schema.json"
SCHEMA_SUFFIXES = (".schema.yaml", ".schema.yml", ".schema.json")


def tool_files() -> list[Path]:
    """The tool files (schema files excluded), sorted."""
    return sorted(p for p in TOOLS.rglob("*.y*ml") if not p.name.endswith(SCHEMA_SUFFIXES))


@functools.cache
def specs() -> list[ToolSpec]:
    """Every tool of the example registry, disabled ones included, loaded as toolctl does."""
    return list(load_registry(TOOLS, packs=False).tools.values())


def ids() -> list[str]:
    return [spec.name for spec in specs()]


def test_registry_validates_clean() -> None:
    """What `toolctl validate` checks: format, schemas, $refs, examples, test data, handlers."""
    registry = load_registry(TOOLS, packs=False)
    assert [d.format() for d in registry.diagnostics] == []
    assert registry.project is not None
    assert registry.project.python_path == [ROOT / "examples"]


def test_registry_has_the_tools_the_issue_asks_for() -> None:
    assert {
        "weather",
        "reverse",
        "calculator",
        "customer_lookup",
        "write_file",
        "book_meeting",
        "index_files",
    } <= set(ids())
    assert len(ids()) == len(set(ids()))


def test_config_file_points_at_the_registry() -> None:
    assert yamlsrc.load_file(ROOT / "toolctl.yaml").data == {
        "tools": "tools.d",
        "pythonPath": ["examples"],
        "state": ".toolctl/state.db",
        "toolsets": {
            "text": {
                "description": "Text utilities that count and convert text.",
                "loading": "eager",
            }
        },
    }


@pytest.mark.parametrize("path", tool_files(), ids=lambda p: p.name)
def test_tool_file_starts_with_modeline_and_version(path: Path) -> None:
    lines = path.read_text("utf-8").splitlines()
    assert lines[0] == MODELINE
    assert lines[1] == "toolctl: 1"


@pytest.mark.parametrize("spec", specs(), ids=ids())
def test_every_tool_has_test_cases(spec: ToolSpec) -> None:
    assert [case for case in spec.tests if not case.get("skip")]


# --- together the examples use every field of the format ---------------------------------------


def _tool_properties() -> set[str]:
    return set(format_schema()["$defs"]["tool"]["properties"])


def _used(key: str) -> list[Any]:
    return [spec.raw[key] for spec in specs() if key in spec.raw]


def test_every_top_level_field_is_used() -> None:
    used = {key for spec in specs() for key in spec.raw}
    used.add("toolctl")  # single-tool files carry it at the top
    assert _tool_properties() - used == set()
    assert any(key.startswith("x-") for key in used)


def test_every_transform_target_and_phase_and_form_is_used() -> None:
    transforms = _used("transform")
    pairs = {(target, phase) for t in transforms for target in t for phase in t[target]}
    assert pairs == {(target, phase) for target in TARGETS for phase in PHASES}
    forms = {
        form
        for t in transforms
        for phases in t.values()
        for spec in phases.values()
        for form in spec
    }
    assert forms == {"pick", "omit", "redact", "template", "suppress", "call"}


def test_every_model_output_kind_is_used() -> None:
    kinds = {spec.get("type", "call") for spec in _used("toModelOutput")}
    assert kinds == {"text", "json", "content", "call"}
    parts = {part["type"] for spec in _used("toModelOutput") for part in spec.get("parts", [])}
    assert {"text", "image-url"} <= parts


def test_mcp_hooks_provider_options_and_switches_are_used() -> None:
    mcp_keys = {key for spec in _used("mcp") for key in spec}
    assert mcp_keys == {"annotations", "_meta", "icons"}
    hints = {key for spec in _used("mcp") for key in spec.get("annotations", {})}
    assert hints == {"title", "readOnlyHint", "destructiveHint", "idempotentHint", "openWorldHint"}
    assert {key for spec in _used("hooks") for key in spec} == set(HOOK_NAMES)
    providers = {key for spec in _used("providerOptions") for key in spec}
    assert {"anthropic", "bedrock", "openai-responses"} <= providers
    assert False in _used("enabled")
    assert {"inprocess", "subprocess"} <= set(_used("isolation"))
    assert any(isinstance(spec, dict) for spec in _used("background"))


def test_every_test_case_key_is_used() -> None:
    case_schema = format_schema()["$defs"]["tool"]["properties"]["tests"]["items"]
    used = {key for spec in specs() for case in spec.tests for key in case}
    assert set(case_schema["properties"]) - used == set()
    assert any(key.startswith("x-") for key in used)


def test_multi_tool_file_and_shared_schema_file_exist() -> None:
    assert any("tools" in yamlsrc.load_file(p).data for p in tool_files())
    assert (TOOLS / "schemas" / "common.schema.yaml").is_file()
    text = "\n".join(p.read_text("utf-8") for p in tool_files())
    assert "schemas/common.schema.yaml#/$defs/" in text


def test_format_reference_documents_every_key() -> None:
    """docs/format.md has a section for every tool key and a row for every test-case key."""
    doc = (ROOT / "docs" / "format.md").read_text("utf-8")
    tool = format_schema()["$defs"]["tool"]["properties"]
    missing = [key for key in tool if f"### `{key}`" not in doc]
    case_keys = tool["tests"]["items"]["properties"]
    missing += [key for key in case_keys if f"`{key}`" not in doc]
    missing += [phase for phase in PHASES if f"| `{phase}` |" not in doc]
    assert missing == []


# Validation keywords of 2020-12, plus the core and annotation keywords that validate nothing.
KEYWORDS = frozenset(Draft202012Validator.VALIDATORS) | {
    "$schema", "$id", "$defs", "$comment", "$anchor", "$dynamicAnchor",
    "title", "description", "default", "examples", "readOnly", "writeOnly", "deprecated",
}  # fmt: skip
_MAPS = ("properties", "$defs", "patternProperties")
_DATA = ("enum", "const", "default", "examples")


def _unknown_keywords(node: Any, path: tuple[Any, ...] = ()) -> list[str]:
    """Keys that are not JSON Schema keywords (e.g. a flow mapping split by a comma)."""
    found: list[str] = []
    if isinstance(node, list):
        for i, item in enumerate(node):
            found += _unknown_keywords(item, (*path, i))
    if not isinstance(node, dict):
        return found
    for key, value in node.items():
        if key not in KEYWORDS and not key.startswith("x-"):
            found.append("/".join(map(str, (*path, key))))
        if key in _MAPS and isinstance(value, dict):
            for name, sub in value.items():
                found += _unknown_keywords(sub, (*path, key, name))
        elif key not in _DATA:
            found += _unknown_keywords(value, (*path, key))
    return found


@pytest.mark.parametrize("spec", specs(), ids=ids())
def test_schemas_use_only_json_schema_keywords(spec: ToolSpec) -> None:
    keys = ("inputSchema", "outputSchema", "suspendSchema", "resumeSchema", "requestContextSchema")
    assert [p for key in keys if key in spec.raw for p in _unknown_keywords(spec.schema(key))] == []


def test_examples_are_lint_clean() -> None:
    """The showcase follows its own advice: no lint warnings (infos are advice, not findings)."""
    findings = load_registry(TOOLS, packs=False).lint()
    assert [d.format() for d in findings if d.severity.value in ("error", "warning")] == []
