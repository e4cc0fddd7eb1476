"""``$ref`` names schema files inside the project only (issue 20, class 3).

A bundled file is printed by ``export`` and sent by ``tools/list``; a pull request controls the
tool files *and* ``toolctl.yaml``. So whatever ``tools:`` or ``schemas:`` say, a reference never
reads the configuration, the lock, a state or key file, a dot-file, or anything outside the
project root, and the refusal says which files may be referenced and how to fix the reference.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from toolctl.cli.app import run
from toolctl.config import project_at
from toolctl.errors import ConfigError
from toolctl.loader import load_registry
from toolctl.registry import Registry

from .conftest import write

SECRET = "s3cr3t-pa55w0rd-value"
COMMON = "$defs:\n  Id: {type: string, pattern: '^c_[0-9]+$'}\n"


def _tool(ref: str) -> str:
    return (
        "toolctl: 1\nname: t\ndescription: d\ninputSchema:\n  type: object\n"
        f"  properties:\n    x: {{$ref: '{ref}'}}\n"
    )


@pytest.fixture(autouse=True)
def _in_project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # messages name files relative to the working directory


def _load(root: Path, files: dict[str, str], config: str = "") -> Registry:
    """A project at ``root`` with a toolctl.yaml (a PostgreSQL ``state:`` with a password)."""
    write(root, {"toolctl.yaml": f"state: postgresql://app:{SECRET}@db/app\n{config}", **files})
    return load_registry(project=project_at(root), packs=False)


def _text(registry: Registry) -> str:
    return "\n".join(d.format() for d in registry.diagnostics)


def _refused(registry: Registry) -> Any:
    [diag] = registry.diagnostics
    assert (diag.code, diag.file, diag.line, diag.col) == ("TC302", "tools.d/t.yaml", 7, 15)
    assert "only schema files inside the project may be referenced" in diag.message
    assert SECRET not in _text(registry) and "t" not in registry.tools
    return diag


@pytest.mark.parametrize(
    ("ref", "reason"),
    [
        ("../toolctl.yaml", "is configuration"),
        ("../toolctl.yaml#/state", "is configuration"),
        ("../pyproject.toml", "is configuration"),
        ("../toolctl.lock", "is configuration"),
        ("../.toolctl/state.db.key", "dot-file"),
        ("../.toolctl/request-state.key", "dot-file"),
        ("../.git-credentials", "dot-file"),
        ("../.git/config", "dot-file"),
        ("../.env.schema.yaml", "dot-file"),
        ("../state.db.key", "is configuration"),
        ("../secrets.txt", "is not a schema file"),
        ("../common.yaml", "is not a schema file"),
    ],
)
def test_a_ref_to_a_file_that_is_not_a_schema_is_refused_unread(
    tmp_path: Path, ref: str, reason: str
) -> None:
    files = {
        "pyproject.toml": f"[tool.other]\ntoken = '{SECRET}'\n",
        "toolctl.lock": json.dumps({"secret": SECRET}),
        ".toolctl/state.db.key": SECRET,
        ".toolctl/request-state.key": SECRET,
        ".git-credentials": f"https://u:{SECRET}@example.com\n",
        ".git/config": f"[remote]\nurl = {SECRET}\n",
        ".env.schema.yaml": f"const: {SECRET}\n",
        "state.db.key": SECRET,
        "secrets.txt": f"{SECRET}\n",
        "common.yaml": f"const: {SECRET}\n",
        "tools.d/t.yaml": _tool(ref),
    }
    diag = _refused(_load(tmp_path, files))
    assert reason in diag.message


def test_a_schema_file_name_is_the_fix_the_hint_gives(tmp_path: Path) -> None:
    registry = _load(
        tmp_path,
        {"tools.d/_shared/common.yaml": COMMON, "tools.d/t.yaml": _tool("_shared/common.yaml")},
    )
    assert "rename it to tools.d/_shared/common.schema.yaml" in (_refused(registry).hint or "")
    assert "`schemas:`" in (registry.diagnostics[0].hint or "")


def test_tools_dotdot_does_not_widen_what_a_ref_may_read(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A pull request sets `tools: ..`: tool files above the project load, but their $refs
    still reach only schema files inside the project (the root holds toolctl.yaml)."""
    home = tmp_path_factory.mktemp("home")
    write(home, {".git-credentials": f"https://u:{SECRET}@example.com\n"})
    write(home, {"leak.schema.yaml": f"const: {SECRET}\n"})
    root = home / "checkout" / "project"
    write(root, {"tools.d/.keep": ""})
    write(
        home / "checkout",
        {"t.yaml": _tool("../.git-credentials"), "u.yaml": _tool("../leak.schema.yaml")},
    )
    registry = _load(root, {}, "tools: ..\n")
    refused = [d for d in registry.diagnostics if d.code == "TC302"]
    assert sorted(Path(d.file).name for d in refused) == ["t.yaml", "u.yaml"]
    assert all("leaves the project" in d.message for d in refused)
    assert SECRET not in "\n".join(d.format() for d in refused)


def test_a_symlink_named_like_a_schema_cannot_point_at_config(tmp_path: Path) -> None:
    write(tmp_path, {"tools.d/.keep": ""})
    (tmp_path / "tools.d" / "x.schema.yaml").symlink_to(tmp_path / "toolctl.yaml")
    assert (
        "is configuration"
        in _refused(_load(tmp_path, {"tools.d/t.yaml": _tool("x.schema.yaml")})).message
    )


def test_a_symlinked_directory_cannot_lead_out_of_the_project(
    tmp_path: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    outside = tmp_path_factory.mktemp("outside")
    write(outside, {"s/leak.schema.yaml": f"const: {SECRET}\n"})
    write(tmp_path, {"tools.d/.keep": ""})
    (tmp_path / "schemas").symlink_to(outside / "s")
    registry = _load(tmp_path, {"tools.d/t.yaml": _tool("../schemas/leak.schema.yaml")})
    assert "leaves the project" in _refused(registry).message


def test_schema_files_anywhere_in_the_project_bundle(tmp_path: Path) -> None:
    registry = _load(
        tmp_path,
        {
            "schemas/common.schema.yaml": COMMON,
            "tools.d/t.yaml": _tool("../schemas/common.schema.yaml#/$defs/Id"),
        },
    )
    assert registry.ok, _text(registry)
    assert registry.tools["t"].input_schema["$defs"]["common_schema__Id"]["pattern"] == "^c_[0-9]+$"


def test_a_schemas_directory_admits_its_yaml_and_json_files(tmp_path: Path) -> None:
    files = {
        "shared/common.yaml": COMMON,
        "shared/more/ids.json": json.dumps({"$defs": {"Id": {"type": "integer"}}}),
        "shared/notes.txt": SECRET,
        "shared/toolctl.lock": SECRET,
        "tools.d/t.yaml": _tool("../shared/common.yaml#/$defs/Id"),
        "tools.d/u.yaml": _tool("../shared/more/ids.json#/$defs/Id").replace("name: t", "name: u"),
    }
    registry = _load(tmp_path, files, "schemas: [shared]\n")
    assert registry.ok, _text(registry)
    for ref, reason in [
        ("../shared/notes.txt", "not a schema"),
        ("../shared/toolctl.lock", "is configuration"),
    ]:
        (tmp_path / "tools.d" / "u.yaml").unlink(missing_ok=True)
        registry = _load(tmp_path, {"tools.d/t.yaml": _tool(ref)}, "schemas: [shared]\n")
        assert reason in _refused(registry).message


@pytest.mark.parametrize("value", ["..", ".", ".git", "[schemas, ../elsewhere]", "/etc"])
def test_schemas_must_name_visible_directories_inside_the_project(
    tmp_path: Path, value: str
) -> None:
    write(tmp_path, {"toolctl.yaml": f"# c\nschemas: {value}\n"})
    with pytest.raises(ConfigError) as caught:
        project_at(tmp_path)
    message = str(caught.value)
    assert "toolctl.yaml:2:1: 'schemas' lists" in message
    assert "schemas: [schemas]" in (caught.value.hint or "")


@pytest.mark.parametrize(
    ("document", "fragment", "accepted"),
    [
        ("true\n", "", True),
        ("false\n", "", True),
        ("42\n", "", False),
        ("3.5\n", "", False),
        ("[1, 2]\n", "", False),
        ("'text'\n", "", False),
        ("null\n", "", False),
        ("$defs: {n: 7, b: true}\n", "#/$defs/n", False),
        ("$defs: {n: 7, b: true}\n", "#/$defs/b", True),
    ],
)
def test_a_ref_to_a_document_that_is_not_an_object_is_a_diagnostic(
    tmp_path: Path, document: str, fragment: str, accepted: bool
) -> None:
    files = {
        "tools.d/odd.schema.yaml": document,
        "tools.d/t.yaml": _tool(f"odd.schema.yaml{fragment}"),
    }
    registry = _load(tmp_path, files)
    if accepted:
        assert registry.ok, _text(registry)
        return
    diag = registry.diagnostics[0]
    assert (diag.code, diag.line, diag.col) == ("TC302", 7, 15)
    assert "not a schema" in diag.message


def test_validate_reports_a_refused_ref_with_exit_1(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, {"toolctl.yaml": f"state: postgresql://app:{SECRET}@db/app\n"})
    write(tmp_path, {"tools.d/t.yaml": _tool("../toolctl.yaml")})
    monkeypatch.chdir(tmp_path)
    for argv in (["validate"], ["export", "-f", "mcp"]):
        code = run(argv)
        out = capsys.readouterr()
        assert code == 1
        assert "tools.d/t.yaml:7:15: error TC302" in out.err
        assert SECRET not in out.out + out.err


@pytest.mark.parametrize(
    "pointer", ["#/properties/a/maxLength", "#/properties/a/type", "#/required"]
)
def test_a_local_ref_to_a_value_that_is_not_a_schema_is_a_diagnostic(
    tmp_path: Path, pointer: str
) -> None:
    """It crashed `run` (TypeError, exit 3) after `validate` passed."""
    tool = (
        "toolctl: 1\nname: t\ndescription: d\ninputSchema:\n  type: object\n  required: [a]\n"
        f"  properties:\n    a: {{type: string, maxLength: 3}}\n    x: {{$ref: '{pointer}'}}\n"
    )
    registry = _load(tmp_path, {"tools.d/t.yaml": tool})
    [diag] = registry.diagnostics
    assert (diag.code, diag.line, diag.col) == ("TC302", 9, 15)
    assert "not a schema" in diag.message and "t" not in registry.tools


def test_the_configured_run_history_is_never_a_schema_whatever_its_name(tmp_path: Path) -> None:
    """`state: schemas/runs.json` with `schemas: [schemas]` does not make the history (or its
    key) referenceable."""
    config = "schemas: [schemas]\n"
    write(tmp_path, {"schemas/runs.json": "{}", "schemas/runs.json.key": SECRET})
    for ref in ("../schemas/runs.json", "../schemas/runs.json.key"):
        write(tmp_path, {"tools.d/t.yaml": _tool(ref)})
        (tmp_path / "toolctl.yaml").write_text(f"state: schemas/runs.json\n{config}")
        registry = load_registry(project=project_at(tmp_path), packs=False)
        assert "is configuration, a lock, a run history or a key" in _refused(registry).message


@pytest.mark.parametrize(
    "ref", ["a%00.schema.yaml", "a\\u0000b.schema.yaml", "x" * 5000 + ".schema.yaml"]
)
def test_a_ref_path_the_system_refuses_is_a_diagnostic_not_a_crash(
    tmp_path: Path, ref: str
) -> None:
    tool = _tool("REF").replace("'REF'", f'"{ref}"')
    registry = _load(tmp_path, {"tools.d/t.yaml": tool})
    [diag] = registry.diagnostics
    assert (diag.code, diag.line) == ("TC302", 7)
