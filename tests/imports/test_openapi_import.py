"""``toolctl import openapi``: specs become tools that validate, lint and export clean; hostile
specs end in a clear reason, never a hang or a crash; a re-import keeps hand edits."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import Capture, toolctl
from tests.export.sdk import VALIDATORS, validate_mcp
from tests.imports.conftest import PETSTORE
from toolctl.export import export_result
from toolctl.loader import load_registry
from toolctl.yamlsrc import dumps, load_file


def _spec(tmp: Path, paths: dict[str, Any], **extra: Any) -> Path:
    doc = {"openapi": "3.1.0", "info": {"title": "Odd API", "version": "1"}, "paths": paths}
    doc.update(extra)
    target = tmp / "odd.json"
    target.write_text(json.dumps(doc))
    return target


def _get(op: dict[str, Any] | None = None) -> dict[str, Any]:
    base: dict[str, Any] = {"responses": {"200": {"description": "ok"}}}
    base.update(op or {})
    return base


def test_imported_tools_validate_lint_and_pass_every_provider_sdk(
    project: Path, capsys: Capture
) -> None:
    code, _, err = toolctl(capsys, "import", "openapi", str(PETSTORE))
    assert code == 0, err
    assert "skipped PUT /pets/{petId}/photo: request body is multipart/form-data" in err
    out_dir = project / "tools.d" / "pet-store"
    assert sorted(p.stem for p in out_dir.glob("*.yaml")) == [
        "create_pet",
        "delete_pet",
        "get_owners_owner_id_pets",  # no operationId: method and path
        "get_pet_by_id",
        "list_pets",
    ]
    assert toolctl(capsys, "validate")[0] == 0
    code, _, err = toolctl(capsys, "lint")
    assert code == 0, err
    registry = load_registry(project / "tools.d", packs=False)
    for fmt, check in VALIDATORS.items():
        result = export_result(registry, fmt)
        assert result.ok, (fmt, [d.format() for d in result.diagnostics])
        check(result.data)
    validate_mcp(export_result(registry, "mcp").data, "2025-11-25")


def test_the_declaration_follows_the_operation(project: Path, capsys: Capture) -> None:
    toolctl(capsys, "import", "openapi", str(PETSTORE))
    registry = load_registry(project / "tools.d", packs=False)
    get = registry.get("get_pet_by_id")
    assert get.annotations == {
        "readOnlyHint": True,
        "idempotentHint": True,
        "openWorldHint": True,
    }
    assert get.input_schema["required"] == ["petId"]
    assert get.http == {
        "method": "GET",
        "path": "/pets/{petId}",
        "baseUrl": "http://127.0.0.1:4010",
        "baseUrlEnv": "PET_STORE_BASE_URL",
        "parameters": [{"name": "petId", "in": "path"}],
        "auth": [{"secret": "PET_STORE_API_KEY", "in": "header", "name": "X-API-Key"}],
    }
    assert get.secrets == ("PET_STORE_API_KEY",)
    # the cycle Pet -> Owner -> Pet is one $defs entry each, referring to the other
    defs = get.output_schema["$defs"]
    assert defs["Owner"]["properties"]["pets"]["items"] == {"$ref": "#/$defs/Pet"}
    # OpenAPI 3.0 nullable became a 2020-12 type list; int64 (unchecked) was dropped
    assert defs["NewPet"]["properties"]["tag"] == {"type": ["string", "null"]}
    delete = registry.get("delete_pet")
    assert delete.annotations["destructiveHint"] is True
    assert delete.require_approval is True  # destructive: approval by default
    listed = registry.get("list_pets")
    assert listed.http["response"] == {"wrap": "result"}  # an array answer, as an object
    assert listed.output_schema["properties"]["result"]["type"] == "array"
    assert registry.get("create_pet").input_schema["required"] == ["body"]


def test_remote_refs_are_refused_without_touching_the_network(
    project: Path, capsys: Capture
) -> None:
    spec = _spec(
        project,
        {
            "/a": {
                "get": _get(
                    {
                        "operationId": "remote",
                        "parameters": [
                            {
                                "name": "q",
                                "in": "query",
                                "schema": {"$ref": "https://evil.example/s.json"},
                            }
                        ],
                    }
                )
            },
            "/b": {"get": _get({"operationId": "fine"})},
        },
    )
    code, _, err = toolctl(capsys, "import", "openapi", str(spec), "-o", "tools.d/odd")
    assert code == 0
    assert "skipped GET /a: $ref 'https://evil.example/s.json' points outside the spec" in err
    assert [p.stem for p in (project / "tools.d" / "odd").glob("*.yaml")] == ["fine"]


def test_hostile_specs_end_in_a_reason_not_a_crash(project: Path, capsys: Capture) -> None:
    deep: dict[str, Any] = {"type": "string"}
    for _ in range(200):
        deep = {"type": "array", "items": deep}
    spec = _spec(
        project,
        {
            "/self": {
                "get": _get(
                    {
                        "operationId": "self_ref",
                        "parameters": [{"$ref": "#/components/parameters/Loop"}],
                    }
                )
            },
            "/deep": {
                "get": _get(
                    {
                        "operationId": "deep",
                        "parameters": [{"name": "d", "in": "query", "schema": deep}],
                    }
                )
            },
            "/enum": {
                "get": _get(
                    {
                        "operationId": "big_enum",
                        "parameters": [
                            {
                                "name": "e",
                                "in": "query",
                                "schema": {"enum": [f"v{i}" for i in range(5000)]},
                            }
                        ],
                    }
                )
            },
            "/dangling": {
                "get": _get(
                    {
                        "operationId": "dangling",
                        "parameters": [
                            {
                                "name": "x",
                                "in": "query",
                                "schema": {"$ref": "#/components/schemas/Nope"},
                            }
                        ],
                    }
                )
            },
        },
        components={"parameters": {"Loop": {"$ref": "#/components/parameters/Loop"}}},
    )
    code, _, err = toolctl(capsys, "import", "openapi", str(spec), "-o", "tools.d/odd")
    assert code == 0, err
    assert "skipped GET /self: $ref '#/components/parameters/Loop' refers to itself" in err
    assert "skipped GET /deep: schema at parameter d" in err and "nests deeper than 64" in err
    assert "skipped GET /dangling: $ref '#/components/schemas/Nope' names nothing" in err
    assert "big_enum: note: parameter e: enum of 5000 values dropped (over 256)" in err
    assert toolctl(capsys, "validate")[0] == 0


def test_names_are_unique_snake_case_and_fit_every_provider(project: Path, capsys: Capture) -> None:
    spec = _spec(
        project,
        {
            "/x": {
                "get": _get({"operationId": "getThing"}),
                "put": _get({"operationId": "get-thing"}),
                "post": _get({"operationId": "x" * 100}),
            },
            "/9lives/{id}": {"delete": _get()},
        },
    )
    assert toolctl(capsys, "import", "openapi", str(spec), "-o", "tools.d/odd")[0] == 0
    names = sorted(p.stem for p in (project / "tools.d" / "odd").glob("*.yaml"))
    assert names[:2] == ["delete_9lives_id", "get_thing"]
    assert "get_thing_2" in names
    assert all(len(n) <= 64 for n in names)
    assert toolctl(capsys, "validate")[0] == 0


def test_selection_by_tag_and_operation(project: Path, capsys: Capture) -> None:
    code, _, _ = toolctl(
        capsys, "import", "openapi", str(PETSTORE), "--tag", "owners", "--operation", "deletePet"
    )
    assert code == 0
    found = sorted(p.stem for p in (project / "tools.d" / "pet-store").glob("*.yaml"))
    assert found == ["delete_pet", "get_owners_owner_id_pets"]  # either filter selects
    code, _, err = toolctl(capsys, "import", "openapi", str(PETSTORE), "--operation", "nope")
    assert code == 2 and "no operation with operationId nope" in err


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"swagger": "2.0"}', "not an OpenAPI document"),
        ('{"openapi": "3.0.0", "paths": {}, "paths": {}}', "duplicate key 'paths'"),
        ("openapi: 4.0.0\npaths: {}\n", "OpenAPI 4.0.0 is not supported"),
        ("a: &x 1\nb: *x\n", "anchors and aliases are not allowed"),
    ],
)
def test_a_file_that_is_not_a_spec_is_a_usage_error(
    project: Path, capsys: Capture, text: str, message: str
) -> None:
    spec = project / "bad.yaml"
    spec.write_text(text)
    code, _, err = toolctl(capsys, "import", "openapi", str(spec))
    assert code in (1, 2) and message in err
    assert "Traceback" not in err


def _edit(path: Path, change: dict[str, Any]) -> None:
    data = load_file(path).data
    data.update(change)
    path.write_text(dumps(data, sort_keys=False))


def test_reimport_keeps_hand_edits_and_names_the_change_classes(
    project: Path, capsys: Capture
) -> None:
    spec = project / "petstore.yaml"
    spec.write_text(PETSTORE.read_text())
    assert toolctl(capsys, "import", "openapi", str(spec))[0] == 0
    out_dir = project / "tools.d" / "pet-store"
    _edit(
        out_dir / "get_pet_by_id.yaml", {"description": "Look one pet up by its id (hand written)."}
    )
    _edit(out_dir / "delete_pet.yaml", {"requireApproval": False, "enabled": False})
    upstream = spec.read_text()
    upstream = upstream.replace(
        "schema: {type: integer, format: int32, minimum: 1, maximum: 100}",
        "schema: {type: integer, format: int32, minimum: 1, maximum: 10}",
    )  # list_pets: the input narrows (breaking)
    upstream = upstream.replace("summary: Get one pet", "summary: Fetch one pet")
    upstream = upstream.replace("Returns the pets in the store", "Lists the pets in the store")
    spec.write_text(upstream)
    code, out, err = toolctl(capsys, "import", "openapi", str(spec))
    assert code == 0, err
    get = load_file(out_dir / "get_pet_by_id.yaml").data
    assert get["description"] == "Look one pet up by its id (hand written)."
    assert get["title"] == "Fetch one pet"  # not edited by hand: the upstream's new title
    delete = load_file(out_dir / "delete_pet.yaml").data
    assert delete["requireApproval"] is False and delete["enabled"] is False
    listed = load_file(out_dir / "list_pets.yaml").data
    assert listed["inputSchema"]["properties"]["limit"]["maximum"] == 10
    assert "kept hand edit: get_pet_by_id: description" in err
    assert "kept hand edit: delete_pet: requireApproval" in err
    assert "list_pets" in out and "breaking" in out and "TD111" in out
    assert "TD301" in out  # list_pets' description: model-visible text
    # a third import with no upstream change writes nothing
    code, out, err = toolctl(capsys, "import", "openapi", str(spec))
    assert code == 0 and "0 written, 5 unchanged" in err and out == ""


def test_pointing_an_imported_tool_elsewhere_is_a_safety_change(
    project: Path, capsys: Capture
) -> None:
    assert toolctl(capsys, "import", "openapi", str(PETSTORE))[0] == 0
    assert toolctl(capsys, "lock")[0] == 0
    tool_file = project / "tools.d" / "pet-store" / "get_pet_by_id.yaml"
    text = tool_file.read_text().replace("http://127.0.0.1:4010", "https://collector.invalid")
    tool_file.write_text(text)
    code, out, _ = toolctl(capsys, "diff", "--fail-on", "safety")
    assert code == 1
    assert "safety" in out and "TD208" in out and "https://collector.invalid/pets/{petId}" in out
    assert toolctl(capsys, "lock", "--check")[0] == 1


def test_a_yaml_spec_may_key_responses_by_number(project: Path, capsys: Capture) -> None:
    spec = project / "ints.yaml"
    spec.write_text(
        "openapi: 3.0.0\n"
        "info: {title: Ints, version: 2024-01-01}\n"  # a date stays a string
        "paths:\n"
        "  /n:\n"
        "    get:\n"
        "      operationId: getN\n"
        "      responses:\n"
        "        200:\n"
        "          description: ok\n"
        "          content:\n"
        "            application/json:\n"
        "              schema: {type: object, properties: {n: {type: integer}}}\n"
    )
    code, _, err = toolctl(capsys, "import", "openapi", str(spec))
    assert code == 0, err
    tool = load_file(project / "tools.d" / "ints" / "get_n.yaml").data
    assert tool["outputSchema"]["properties"] == {"n": {"type": "integer"}}
    assert toolctl(capsys, "validate")[0] == 0
