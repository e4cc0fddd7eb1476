"""The example registry in tools.d/: well-formed, complete, and a showcase of every format field."""

from __future__ import annotations

import ast
import functools
from pathlib import Path
from typing import Any

import pytest

from toolctl import refs, yamlsrc
from toolctl.schema import Validator, check_schema, make_validator
from toolctl.spec import HOOK_NAMES, PHASES, TARGETS, format_schema

ROOT = Path(__file__).resolve().parents[2]
TOOLS = ROOT / "tools.d"
MODELINE = "# yaml-language-server: $schema=../schema/tool.v1.schema.json"
SCHEMA_SUFFIXES = (".schema.yaml", ".schema.yml", ".schema.json")


def tool_files() -> list[Path]:
    """The tool files (schema files excluded), sorted."""
    return sorted(p for p in TOOLS.rglob("*.y*ml") if not p.name.endswith(SCHEMA_SUFFIXES))


@functools.cache
def declarations() -> list[tuple[Path, dict[str, Any]]]:
    """Every tool declaration with the file it is in."""
    found = []
    for path in tool_files():
        data = yamlsrc.load_file(path).data
        found += [(path, tool) for tool in data.get("tools", [data])]
    return found


def bundled(path: Path, schema: Any) -> Any:
    """``schema`` (from ``path``) with its registry ``$ref``s pulled in."""
    out, problems = refs.bundle(
        schema, file=path, display=str(path), root_dir=TOOLS, load=yamlsrc.load_file
    )
    assert problems == []
    return out


def ids() -> list[str]:
    return [tool["name"] for _, tool in declarations()]


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
    }


@pytest.mark.parametrize("path", tool_files(), ids=lambda p: p.name)
def test_tool_file_starts_with_modeline_and_version(path: Path) -> None:
    lines = path.read_text("utf-8").splitlines()
    assert lines[0] == MODELINE
    assert "toolctl: 1" in [line for line in lines if not line.startswith("#")][:1]


@pytest.mark.parametrize("path", tool_files(), ids=lambda p: p.name)
def test_tool_file_matches_the_format_schema(path: Path) -> None:
    problems = make_validator(format_schema()).errors(yamlsrc.load_file(path).data)
    assert [f"{p.pointer}: {p.message}" for p in problems] == []


@pytest.mark.parametrize(("path", "tool"), declarations(), ids=ids())
def test_schemas_are_valid_and_examples_match_them(path: Path, tool: dict[str, Any]) -> None:
    schemas = {
        key: bundled(path, tool[key])
        for key in (
            "inputSchema",
            "outputSchema",
            "suspendSchema",
            "resumeSchema",
            "requestContextSchema",
        )
        if key in tool
    }
    for key, schema in schemas.items():
        assert check_schema(schema) == [], key
    validate: dict[str, Validator] = {}
    for key, schema in schemas.items():
        validate[key] = make_validator(schema)
    for example in tool.get("inputExamples", []):
        assert validate["inputSchema"].errors(example["input"]) == []
    for case in tool["tests"]:
        for case_key, schema_key in (
            ("input", "inputSchema"),
            ("resume", "resumeSchema"),
            ("context", "requestContextSchema"),
        ):
            if case_key in case:
                assert validate[schema_key].errors(case[case_key]) == [], case["name"]


@pytest.mark.parametrize(("path", "tool"), declarations(), ids=ids())
def test_every_tool_has_test_cases(path: Path, tool: dict[str, Any]) -> None:
    assert [case for case in tool["tests"] if not case.get("skip")]


def _references(tool: dict[str, Any]) -> list[str]:
    found = [tool["handler"], *tool.get("hooks", {}).values()]
    if "call" in tool.get("toModelOutput", {}):
        found.append(tool["toModelOutput"]["call"])
    for phases in tool.get("transform", {}).values():
        found += [spec["call"] for spec in phases.values() if "call" in spec]
    return found


@pytest.mark.parametrize(("path", "tool"), declarations(), ids=ids())
def test_references_name_module_level_functions(path: Path, tool: dict[str, Any]) -> None:
    """Checked statically (the module is parsed, not imported), like ``toolctl validate``."""
    for ref in _references(tool):
        module, _, attr = ref.partition(":")
        source = ROOT / "examples" / Path(*module.split(".")).with_suffix(".py")
        tree = ast.parse(source.read_text("utf-8"))
        names = {node.name for node in tree.body if isinstance(node, ast.FunctionDef)}
        assert attr in names, ref


# --- together the examples use every field of the format ---------------------------------------


def _tool_properties() -> set[str]:
    return set(format_schema()["$defs"]["tool"]["properties"])


def _used(key: str) -> list[Any]:
    return [tool[key] for _, tool in declarations() if key in tool]


def test_every_top_level_field_is_used() -> None:
    used = {key for _, tool in declarations() for key in tool}
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
    assert {"anthropic", "bedrock", "openai"} <= providers
    assert False in _used("enabled")
    assert {"inprocess", "subprocess"} <= set(_used("isolation"))
    assert any(isinstance(spec, dict) for spec in _used("background"))


def test_every_test_case_key_is_used() -> None:
    case_schema = format_schema()["$defs"]["tool"]["properties"]["tests"]["items"]
    used = {key for _, tool in declarations() for case in tool["tests"] for key in case}
    assert set(case_schema["properties"]) - used == set()
    assert any(key.startswith("x-") for key in used)


def test_multi_tool_file_and_shared_schema_file_exist() -> None:
    assert any("tools" in yamlsrc.load_file(p).data for p in tool_files())
    assert (TOOLS / "schemas" / "common.schema.yaml").is_file()
    text = "\n".join(p.read_text("utf-8") for p in tool_files())
    assert "schemas/common.schema.yaml#/$defs/" in text
