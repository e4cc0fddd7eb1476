"""``$ref`` safety and schema checks: every case of reliability.md §2.2 (16-22)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolctl.schema import make_validator

from .conftest import codes, run_toolctl, write

SECRET = "s3cr3t-token-value"


def _tool(schema_yaml: str, extra: str = "") -> str:
    """A tool file whose inputSchema is ``schema_yaml`` (indented 2) plus ``type: object``."""
    if not schema_yaml.startswith("  type: object\n"):
        schema_yaml = "  type: object\n" + schema_yaml
    return f"toolctl: 1\nname: t\ndescription: d\ninputSchema:\n{schema_yaml}{extra}"


def _all_text(registry: Any) -> str:
    return "\n".join(d.format() for d in registry.diagnostics)


# 16 -----------------------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_remote_ref_is_refused_with_zero_hits(registry_of: Any, server: Any) -> None:
    url, hits = server
    registry = registry_of(
        {
            "tools.d/t.yaml": _tool(
                f"  type: object\n  properties:\n    x: {{$ref: '{url}/x.json'}}\n",
                "inputExamples:\n  - input: {x: hello}\n",
            )
        }
    )
    [diag] = registry.diagnostics
    assert diag.code == "TC302"
    assert "remote and file: references are not allowed" in diag.message
    assert (diag.file, diag.line, diag.col) == ("tools.d/t.yaml", 7, 15)  # the $ref value
    assert hits == []


@pytest.mark.timeout(30)
def test_validator_never_fetches(server: Any) -> None:
    url, hits = server
    validator = make_validator({"$ref": f"{url}/x.json"})
    [problem] = validator.errors("hello")
    assert problem.keyword == "$ref"
    assert "cannot be resolved" in problem.message
    assert not validator.is_valid("hello")
    assert hits == []


# 17 -----------------------------------------------------------------------------------------


def test_file_uri_ref_never_shows_the_file(registry_of: Any, tmp_path: Path) -> None:
    secret = tmp_path / "secret.json"
    secret.write_text(f'{{"const": "{SECRET}"}}', encoding="utf-8")
    uri = secret.as_uri()
    registry = registry_of(
        {
            "tools.d/t.yaml": _tool(
                f"  type: object\n  properties:\n    x: {{$ref: '{uri}'}}\n",
                "inputExamples:\n  - input: {x: nope}\n",
            )
        }
    )
    assert codes(registry) == ["TC302"]
    assert SECRET not in _all_text(registry)
    problems = make_validator({"$ref": uri}).errors("nope")
    assert problems and all(SECRET not in p.message for p in problems)
    result = run_toolctl("validate", "tools.d", "--no-packs", cwd=tmp_path)
    assert result.returncode == 1
    assert SECRET not in result.stderr + result.stdout


# 18 -----------------------------------------------------------------------------------------


@pytest.mark.timeout(30)
def test_id_with_relative_ref_stays_offline(registry_of: Any, server: Any) -> None:
    url, hits = server
    registry = registry_of(
        {
            "tools.d/t.yaml": _tool(
                f"  $id: '{url}/'\n  $ref: x.json\n", "tests:\n  - name: a\n    input: {}\n"
            )
        }
    )
    assert "TC302" in codes(registry)
    assert hits == []
    validator = make_validator({"$id": f"{url}/", "$ref": "x.json"})
    assert not validator.is_valid("abc")
    assert hits == []


# 19 -----------------------------------------------------------------------------------------

COMMON = """
$defs:
  Id:
    type: string
    pattern: '^[a-z]+-[0-9]+$'
"""


def test_local_ref_to_registry_schema_file_resolves(registry_of: Any) -> None:
    registry = registry_of(
        {
            "tools.d/common.schema.yaml": COMMON,
            "tools.d/t.yaml": _tool(
                "  type: object\n  properties:\n"
                "    id: {$ref: 'common.schema.yaml#/$defs/Id'}\n  required: [id]\n",
                "inputExamples:\n  - input: {id: abc-12}\n",
            ),
        }
    )
    assert registry.diagnostics == []
    schema = registry.get("t").input_schema
    assert all(r.startswith("#") for r in _refs(schema))
    validator = make_validator(schema)
    assert validator.is_valid({"id": "abc-12"})
    assert not validator.is_valid({"id": "ABC"})


def test_example_checked_against_bundled_ref(registry_of: Any) -> None:
    registry = registry_of(
        {
            "tools.d/common.schema.yaml": COMMON,
            "tools.d/t.yaml": _tool(
                "  type: object\n  properties:\n    id: {$ref: 'common.schema.yaml#/$defs/Id'}\n",
                "inputExamples:\n  - input: {id: NOPE}\n",
            ),
        }
    )
    [diag] = registry.diagnostics
    assert diag.code == "TC304"
    assert (diag.line, diag.col) == (9, 17)


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for v in node.values() for r in _refs(v)]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


@pytest.mark.parametrize("ref", ["../../etc/passwd", "../../outside.schema.yaml#/$defs/Id"])
def test_ref_leaving_the_registry_is_refused(registry_of: Any, tmp_path: Path, ref: str) -> None:
    write(tmp_path, {"outside.schema.yaml": COMMON})  # tmp_path is the project root
    registry = registry_of({"tools.d/t.yaml": _tool(f"  $ref: '{ref}'\n")})
    [diag] = registry.diagnostics
    assert diag.code == "TC302"
    assert "leaves the project" in diag.message
    assert (diag.line, diag.col) == (6, 9)  # the $ref value
    assert "root:" not in _all_text(registry)  # no /etc/passwd contents


def test_symlinked_schema_leaving_the_registry_is_refused(
    registry_of: Any, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")  # beside the project, not in it
    write(outside, {"secret.schema.yaml": f"const: {SECRET}\n"})
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "link.schema.yaml").symlink_to(outside / "secret.schema.yaml")
    registry = registry_of({"tools.d/t.yaml": _tool("  $ref: link.schema.yaml\n")})
    assert codes(registry) == ["TC302"]
    assert SECRET not in _all_text(registry)


# 20 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "schema_yaml",
    [
        "  $ref: '#'\n",
        "  $defs:\n    a: {$ref: '#/$defs/b'}\n    b: {$ref: '#/$defs/a'}\n  $ref: '#/$defs/a'\n",
        "  allOf:\n    - $ref: '#'\n",
    ],
)
def test_ref_cycles_are_reported_not_recursion(registry_of: Any, schema_yaml: str) -> None:
    registry = registry_of(
        {"tools.d/t.yaml": _tool(schema_yaml, "inputExamples:\n  - input: {}\n")}
    )
    assert codes(registry) == ["TC303"]
    assert "$ref cycle that never ends" in registry.diagnostics[0].message


def test_cycle_across_schema_files_is_reported(registry_of: Any) -> None:
    registry = registry_of(
        {
            "tools.d/c.schema.yaml": "$defs:\n  A: {$ref: '#/$defs/B'}\n  B: {$ref: '#/$defs/A'}\n",
            "tools.d/t.yaml": _tool("  $ref: 'c.schema.yaml#/$defs/A'\n"),
        }
    )
    assert codes(registry) == ["TC303"]


@pytest.mark.parametrize(
    "schema",
    [
        {"$ref": "#"},
        {"$defs": {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}}, "$ref": "#/$defs/a"},
    ],
)
def test_validating_against_a_cycle_is_an_error_not_a_crash(schema: dict[str, Any]) -> None:
    [problem] = make_validator(schema).errors(1)
    assert problem.keyword == "depth"


def test_recursion_through_properties_is_fine(registry_of: Any) -> None:
    tree = (
        "  $defs:\n    node:\n      type: object\n      properties:\n"
        "        children: {type: array, items: {$ref: '#/$defs/node'}}\n"
        "  $ref: '#/$defs/node'\n"
    )
    registry = registry_of(
        {"tools.d/t.yaml": _tool(tree, "inputExamples:\n  - input: {children: [{}]}\n")}
    )
    assert registry.diagnostics == []


# 21 -----------------------------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_schema_alias_bomb_is_rejected_at_load(registry_of: Any) -> None:
    lines = ["toolctl: 1", "name: t", "description: d", "x-defs:", "  l0: &l0 {type: string}"]
    for i in range(1, 9):
        lines.append(f"  l{i}: &l{i} {{allOf: [{', '.join([f'*l{i - 1}'] * 6)}]}}")
    lines.append("inputSchema: *l8")
    registry = registry_of({"tools.d/t.yaml": "\n".join(lines) + "\n"})
    [diag] = registry.diagnostics
    assert (diag.code, diag.line) == ("TC102", 5)
    assert len(registry) == 0


# 22 -----------------------------------------------------------------------------------------


def test_unclosed_pattern_is_a_schema_error(registry_of: Any) -> None:
    registry = registry_of(
        {
            "tools.d/t.yaml": _tool(
                "  type: object\n  properties:\n    q: {type: string, pattern: '(unclosed'}\n",
                "inputExamples:\n  - input: {q: x}\n",
            )
        }
    )
    assert codes(registry) == ["TC301"]
    diag = registry.diagnostics[0]
    assert "(unclosed" in diag.message
    assert diag.line == 7


# nested $id ---------------------------------------------------------------------------------


def test_nested_id_is_refused(registry_of: Any) -> None:
    registry = registry_of(
        {"tools.d/t.yaml": _tool("  type: object\n  properties:\n    a: {$id: 'urn:a'}\n")}
    )
    assert codes(registry) == ["TC305"]
    assert registry.diagnostics[0].line == 7


def test_bundled_name_never_shadows_an_existing_def(registry_of: Any) -> None:
    """A schema that already has `$defs/common_schema__Id` keeps it, and the ref still works."""
    registry = registry_of(
        {
            "tools.d/common.schema.yaml": COMMON,
            "tools.d/t.yaml": _tool(
                "  type: object\n  $defs:\n    common_schema__Id: {type: integer}\n"
                "  properties:\n"
                "    id: {$ref: 'common.schema.yaml#/$defs/Id'}\n"
                "    n: {$ref: '#/$defs/common_schema__Id'}\n",
                "inputExamples:\n  - input: {id: abc-1, n: 3}\n",
            ),
        }
    )
    assert registry.diagnostics == []
    validator = make_validator(registry.get("t").input_schema)
    assert validator.is_valid({"id": "abc-1", "n": 3})
    assert not validator.is_valid({"id": 5})
    assert not validator.is_valid({"n": "x"})


# shared definitions: bundled once per load ------------------------------------------------

SHARED = {
    "tools.d/schemas/common.schema.yaml": (
        "$defs:\n"
        "  Country: {type: string, pattern: '^[A-Z]{2}$', default: DE}\n"
        "  Place:\n"
        "    type: object\n"
        "    properties:\n"
        "      country: {$ref: '#/$defs/Country'}\n"
        "      city: {type: string, default: Berlin}\n"
        "    required: [country]\n"
    ),
}


def _sharing(n: int) -> dict[str, str]:
    files = dict(SHARED)
    for i in range(n):
        files[f"tools.d/t{i}.yaml"] = (
            f"toolctl: 1\nname: t{i}\ndescription: d\nstrict: true\napplyDefaults: true\n"
            "inputSchema:\n  type: object\n  properties:\n"
            "    place: {$ref: 'schemas/common.schema.yaml#/$defs/Place'}\n"
            "  required: [place]\n"
            "inputExamples:\n  - input: {place: {country: FR}}\n"
        )
    return files


def test_tools_share_one_bundled_definition_that_nothing_modifies(registry_of: Any) -> None:
    import copy

    from toolctl.export import export_result, list_formats
    from toolctl.lint import lint
    from toolctl.schemadefaults import fill_defaults

    registry = registry_of(_sharing(3))
    assert registry.ok, _all_text(registry)
    schemas = [registry.tools[f"t{i}"].input_schema for i in range(3)]
    place = schemas[0]["$defs"]["common_schema__Place"]
    # one object, not a copy per tool
    assert all(s["$defs"]["common_schema__Place"] is place for s in schemas)
    assert place["properties"]["country"] == {"$ref": "#/$defs/common_schema__Country"}
    before = copy.deepcopy(schemas)
    for fmt in [f["name"] for f in list_formats()]:
        export_result(registry, fmt)
    lint(registry)
    fill_defaults(schemas[0], {"place": {}})
    make_validator(schemas[1]).errors({"place": {"country": "fr"}})
    assert schemas == before


def _sharing_edited(n: int, old: str, new: str) -> dict[str, str]:
    """:func:`_sharing`'s files with ``old`` replaced by ``new`` in the shared schema file."""
    files = _sharing(n)
    shared = "tools.d/schemas/common.schema.yaml"
    files[shared] = SHARED[shared].replace(old, new)
    return files


def test_a_broken_shared_reference_leaves_out_every_tool_using_it(registry_of: Any) -> None:
    registry = registry_of(_sharing_edited(2, "'#/$defs/Country'", "'#/$defs/Nation'"))
    # located where it is wrong, in the schema file (once: the same problem, the same place)
    found = [(d.code, d.file, d.line, d.col) for d in registry.diagnostics]
    assert found == [("TC302", "tools.d/schemas/common.schema.yaml", 6, 23)]  # the $ref value
    assert not registry.tools  # both tools are left out, not only the first


def test_an_invalid_shared_definition_fails_every_tool_naming_it(registry_of: Any) -> None:
    # shared definitions are checked once per load: each tool still gets the whole check's error
    broken = registry_of(_sharing_edited(2, "pattern: '^[A-Z]{2}$'", "pattern: '(unclosed'"))
    assert [(d.code, d.tool) for d in broken.diagnostics] == [("TC301", "t0"), ("TC301", "t1")]
    assert all("(unclosed" in d.message for d in broken.diagnostics)
    assert not broken.tools


def test_a_tool_own_schema_error_is_found_beside_valid_shared_ones(registry_of: Any) -> None:
    files = _sharing(2)
    files["tools.d/t1.yaml"] = files["tools.d/t1.yaml"].replace(
        "  required: [place]\n", "  required: [place]\n  minProperties: many\n"
    )
    registry = registry_of(files)
    [diag] = registry.diagnostics
    assert (diag.code, diag.tool, diag.file, diag.line) == ("TC301", "t1", "tools.d/t1.yaml", 11)
    assert sorted(registry.tools) == ["t0"]


def test_a_refused_reference_is_located_in_each_referencing_tool(registry_of: Any) -> None:
    files = {
        f"tools.d/t{i}.yaml": _tool(
            f"  properties:\n    x: {{$ref: '{'../' * 3}etc/x.schema.json'}}\n"
        ).replace("name: t", f"name: t{i}")
        for i in range(2)
    }
    registry = registry_of(files)
    found = sorted((d.code, d.file, d.line, d.col) for d in registry.diagnostics)
    assert found == [("TC302", f"tools.d/t{i}.yaml", 7, 15) for i in range(2)]


def test_an_equal_schema_beside_other_files_is_checked_again(registry_of: Any) -> None:
    # the same schema text, sound in a/, names a broken definition in b/: an equal schema
    # found sound earlier in the load is taken over only where its references name the same
    files = {
        f"tools.d/{d}/t.yaml": _tool(
            "  properties:\n    x: {$ref: 'x.schema.yaml#/$defs/X'}\n"
        ).replace("name: t", f"name: t{d}")
        for d in "ab"
    }
    files["tools.d/a/x.schema.yaml"] = "$defs:\n  X: {type: string}\n"
    files["tools.d/b/x.schema.yaml"] = "$defs:\n  X: {type: string, minLength: many}\n"
    registry = registry_of(files)
    assert [(d.code, d.tool) for d in registry.diagnostics] == [("TC301", "tb")]
    assert sorted(registry.tools) == ["ta"]


def test_an_equal_schema_whose_reference_leaves_the_registry_is_still_refused(
    registry_of: Any, tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    # the same text: in a/ it names a schema file of the project (sound, loaded first); in b/
    # a symlink out of the project, which stays refused and unread
    outside = tmp_path_factory.mktemp("outside")
    write(outside, {"x.schema.yaml": f"$defs:\n  X: {{const: {SECRET}}}\n"})
    (tmp_path / "tools.d" / "b").mkdir(parents=True)
    (tmp_path / "tools.d" / "b" / "x.schema.yaml").symlink_to(outside / "x.schema.yaml")
    schema = "  properties:\n    x: {$ref: 'x.schema.yaml#/$defs/X'}\n"
    registry = registry_of(
        {
            "tools.d/a/x.schema.yaml": "$defs:\n  X: {type: string}\n",
            "tools.d/a/t.yaml": _tool(schema).replace("name: t", "name: ta"),
            "tools.d/b/t.yaml": _tool(schema).replace("name: t", "name: tb"),
        }
    )
    assert [(d.code, d.tool) for d in registry.diagnostics] == [("TC302", "tb")]
    assert SECRET not in _all_text(registry)
    assert sorted(registry.tools) == ["ta"]


# what a load shares between tools must never merge what differs ----------------------------


def test_schemas_equal_but_for_a_number_type_keep_their_own_values(registry_of: Any) -> None:
    # tools whose schemas differ only in 1, 1.0, true, 0.0 or -0.0 are not one schema: each
    # keeps what it wrote (an export prints it), though repeated schemas are bundled once
    written = ["1", "1.0", "true", "0.0", "-0.0", "1"]
    files = {"tools.d/common.schema.yaml": COMMON}
    for i, value in enumerate(written):
        files[f"tools.d/t{i}.yaml"] = _tool(
            "  properties:\n"
            "    id: {$ref: 'common.schema.yaml#/$defs/Id'}\n"
            f"    n: {{default: {value}}}\n"
        ).replace("name: t", f"name: t{i}")
    registry = registry_of(files)
    assert registry.diagnostics == []
    got = [registry.tools[f"t{i}"].input_schema["properties"]["n"]["default"] for i in range(6)]
    assert [repr(v) for v in got] == ["1", "1.0", "True", "0.0", "-0.0", "1"]
    # the repeated schema is still one bundled object, with its definition bundled in
    first, last = (registry.tools[t].input_schema for t in ("t0", "t5"))
    assert first is last
    assert list(first["$defs"]) == ["common_schema__Id"]


def test_definitions_keep_the_order_each_tool_names_them_in(registry_of: Any) -> None:
    # the same two definitions, named in opposite orders: each bundled schema lists them as
    # its own references meet them (what an export prints), not as another tool did
    common = "$defs:\n  A: {type: string}\n  B: {type: integer}\n"
    a = "    a: {$ref: 'c.schema.yaml#/$defs/A'}\n"
    b = "    b: {$ref: 'c.schema.yaml#/$defs/B'}\n"
    registry = registry_of(
        {
            "tools.d/c.schema.yaml": common,
            "tools.d/t0.yaml": _tool("  properties:\n" + a + b).replace("name: t", "name: t0"),
            "tools.d/t1.yaml": _tool("  properties:\n" + b + a).replace("name: t", "name: t1"),
            "tools.d/t2.yaml": _tool("  properties:\n" + b + a + b.replace("b:", "c:")).replace(
                "name: t", "name: t2"
            ),
        }
    )
    assert registry.diagnostics == []
    order = {t: list(registry.tools[t].input_schema["$defs"]) for t in ("t0", "t1", "t2")}
    assert order == {
        "t0": ["c_schema__A", "c_schema__B"],
        "t1": ["c_schema__B", "c_schema__A"],
        "t2": ["c_schema__B", "c_schema__A"],
    }
    # the definitions themselves are shared, whatever the order
    defs = [registry.tools[t].input_schema["$defs"]["c_schema__A"] for t in order]
    assert defs[0] is defs[1] is defs[2]


_LEADS = [
    "{type: string}",
    "{type: object, properties: {next: {$ref: '#/$defs/D0'}}}",
    "{$ref: '#/$defs/D1'}",
    "{allOf: [{$ref: '#/$defs/D2'}]}",
    "{anyOf: [{type: string}, {$ref: '#/$defs/D0'}]}",
    "{not: {$ref: '#/$defs/D1'}}",
    "{if: {$ref: '#/$defs/D2'}, then: {type: string}}",
    "{items: {$ref: '#/$defs/D0'}}",
    "{$ref: 'c.schema.yaml#/$defs/S'}",
    "{allOf: [{$ref: 'c.schema.yaml#/$defs/S'}, {$ref: '#/$defs/D0'}]}",
]


def _cycle_cases() -> list[str]:
    """Tool schemas with three own definitions each, some shared references: the definitions
    lead into each other through $ref, applicators and properties, in every mix."""
    import random

    rng = random.Random(27)
    out = []
    for _ in range(60):
        defs = "".join(f"    D{k}: {rng.choice(_LEADS)}\n" for k in range(3))
        root = rng.choice(["#/$defs/D0", "#/$defs/D1", "#/$defs/D2", "c.schema.yaml#/$defs/S"])
        out.append(f"  $defs:\n{defs}  properties:\n    x: {{$ref: '{root}'}}\n")
    return out


def test_cycle_shortcut_agrees_with_the_full_search(registry_of: Any) -> None:
    # a schema whose local references all end in a plain subschema skips the cycle search:
    # the load must report exactly the cycles and chains the full search finds in each
    # schema as written (its reference to another file names a plain string schema, so
    # bundling it in adds no cycle)
    import yaml

    from toolctl.refs import endless_cycles

    files = {"tools.d/c.schema.yaml": "$defs:\n  S: {type: string, maxLength: 9}\n"}
    expected = []
    for i, schema in enumerate(_cycle_cases()):
        text = _tool(schema).replace("name: t", f"name: t{i}")
        files[f"tools.d/t{i}.yaml"] = text
        written = yaml.safe_load(text)["inputSchema"]
        expected += [
            (f"t{i}", f"inputSchema has a $ref cycle that never ends: {' -> '.join(chain)}")
            for _, chain in endless_cycles(written)
        ]
    registry = registry_of(files)
    found = [(d.tool, d.message) for d in registry.diagnostics if d.code == "TC303"]
    assert sorted(found) == sorted(expected)
    assert [d.code for d in registry.diagnostics if d.code != "TC303"] == []
    # both kinds occur: cycles found, and schemas that pass only because none runs
    cyclic = {tool for tool, _ in found}
    assert 5 < len(cyclic) < 55
    assert len(registry.tools) == 60 - len(cyclic)
