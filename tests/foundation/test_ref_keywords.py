"""Every reference keyword follows the ``$ref`` rule: nothing outside the registry, never fetched.

``$dynamicRef``, ``$recursiveRef``, draft-04 ``id`` and a bundled file's own ``$id`` are checked
at load (validate, lint, list), and an export never ships a reference to outside its schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.export.specs import make_spec
from toolctl.export import export_result
from toolctl.schema import make_validator

from .conftest import codes, run_toolctl


def _tool(schema: str, extra: str = "") -> dict[str, str]:
    return {"tools.d/t.yaml": f"toolctl: 1\nname: t\ndescription: d\ninputSchema:\n{schema}{extra}"}


@pytest.mark.timeout(30)
@pytest.mark.parametrize("keyword", ["$dynamicRef", "$ref"])
def test_remote_dynamic_ref_is_refused_everywhere(
    registry_of: Any, server: Any, tmp_path: Path, keyword: str
) -> None:
    url, hits = server
    files = _tool(
        f"  type: object\n  properties:\n    d: {{{keyword}: '{url}/x.json'}}\n",
        "tests:\n  - {name: a, input: {d: abc}}\n",
    )
    registry = registry_of(files)
    [diag] = registry.diagnostics
    assert (diag.code, diag.line) == ("TC302", 7)
    assert "remote and file: references are not allowed" in diag.message
    for command in (("validate",), ("export", "openai"), ("run", "t", "-i", '{"d": "x"}')):
        result = run_toolctl(*command, cwd=tmp_path)
        assert result.returncode in (1, 2), (command, result.stderr)
        assert url not in result.stdout  # never exported
    assert hits == []


def test_recursive_ref_must_be_the_schema_itself(registry_of: Any) -> None:
    schema = (
        "  $schema: https://json-schema.org/draft/2019-09/schema\n  type: object\n"
        "  properties:\n    a: {$recursiveRef: 'http://example.com/s.json'}\n"
        "    b: {$recursiveRef: '#'}\n"
    )
    registry = registry_of(_tool(schema))
    [diag] = registry.diagnostics
    assert diag.code == "TC302" and diag.line == 8 and '$recursiveRef must be "#"' in diag.message


def test_relative_dynamic_ref_to_a_file_is_refused(registry_of: Any) -> None:
    registry = registry_of(
        _tool("  type: object\n  properties:\n    a: {$dynamicRef: 'o.json#x'}\n")
    )
    assert codes(registry) == ["TC302"]
    assert "only #... is supported" in registry.diagnostics[0].message


@pytest.mark.timeout(30)
def test_draft04_nested_id_is_refused(registry_of: Any, server: Any) -> None:
    url, hits = server
    schema = (
        "  $schema: 'http://json-schema.org/draft-04/schema#'\n  type: object\n"
        f"  properties:\n    a:\n      id: '{url}/'\n      allOf: [{{$ref: '#/definitions/x'}}]\n"
        "  definitions: {x: {type: string}}\n"
    )
    registry = registry_of(_tool(schema, "tests:\n  - {name: a, input: {a: abc}}\n"))
    assert "TC305" in codes(registry)
    assert hits == []


def test_local_anchors_resolve(registry_of: Any) -> None:
    schema = (
        "  type: object\n  properties:\n    a: {$ref: '#name'}\n    b: {$dynamicRef: '#node'}\n"
        "  $defs:\n    n: {$anchor: name, type: string}\n"
        "    t: {$dynamicAnchor: node, type: integer}\n"
    )
    registry = registry_of(_tool(schema, "inputExamples:\n  - input: {a: x, b: 1}\n"))
    assert registry.diagnostics == []
    validator = make_validator(registry.get("t").input_schema)
    assert validator.is_valid({"a": "x", "b": 1}) and not validator.is_valid({"a": 1})
    missing = registry_of(_tool("  type: object\n  properties:\n    a: {$ref: '#nope'}\n"))
    assert codes(missing) == ["TC302"]


def test_a_bundled_files_own_id_does_not_rebase_its_refs(registry_of: Any) -> None:
    common = (
        "$id: 'https://example.com/common'\n$schema: https://json-schema.org/draft/2020-12/schema\n"
        "$defs:\n  Id: {type: string, maxLength: 3}\n"
        "  Pair: {type: object, properties: {a: {$ref: '#/$defs/Id'}}}\n"
    )
    files = {
        "tools.d/common.schema.yaml": common,
        **_tool(
            "  type: object\n  properties:\n    p: {$ref: 'common.schema.yaml#/$defs/Pair'}\n",
            "inputExamples:\n  - input: {p: {a: abc}}\n",
        ),
    }
    registry = registry_of(files)
    assert registry.diagnostics == []
    schema = registry.get("t").input_schema
    assert "$id" not in str(schema["$defs"])
    validator = make_validator(schema)
    assert validator.is_valid({"p": {"a": "abc"}})
    assert [p.message for p in validator.errors({"p": {"a": "toolong"}})] == [
        "'toolong' is too long"
    ]


@pytest.mark.parametrize("keyword", ["$ref", "$dynamicRef", "$recursiveRef"])
@pytest.mark.parametrize("fmt", ["openai", "gemini", "mcp"])
def test_export_of_a_spec_built_in_code_never_ships_an_outward_ref(keyword: str, fmt: str) -> None:
    spec = make_spec(inputSchema={"type": "object", "properties": {"d": {keyword: "file:///etc"}}})
    result = export_result([spec], fmt)
    assert result.data is None
    assert any(d.code == "TC302" and keyword in d.message for d in result.diagnostics)
