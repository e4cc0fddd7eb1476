"""`toolctl new --from module:function` on a corpus of typed functions: every declaration it
writes passes validate and lint without errors, and runs through the real call pipeline."""

from __future__ import annotations

import inspect
from pathlib import Path

import pytest
import yaml

import toolctl
from tests.scaffold import corpus
from toolctl.cli.app import run as cli
from toolctl.diagnostics import Severity

REPO = Path(__file__).resolve().parents[2]
FUNCTIONS = sorted(
    name
    for name, obj in vars(corpus).items()
    if inspect.isfunction(obj) and obj.__module__ == corpus.__name__
)


def make_project(root: Path) -> Path:
    (root / "toolctl.yaml").write_text(
        f"tools: tools.d\npythonPath: [handlers, {REPO.as_posix()}]\n", "utf-8"
    )
    (root / "tools.d").mkdir()
    return root


# one worker writes the project once for the module (each xdist worker would write its own)
pytestmark = pytest.mark.xdist_group("scaffold-new")


@pytest.fixture(scope="module")
def declared(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A project holding a tool for every corpus function, written by the CLI."""
    root = make_project(tmp_path_factory.mktemp("new"))
    with pytest.MonkeyPatch.context() as mp:
        mp.chdir(root)
        for name in FUNCTIONS:
            assert cli(["new", "--from", f"tests.scaffold.corpus:{name}"]) == 0, name
    return root


def test_corpus_is_broad() -> None:
    assert len(FUNCTIONS) >= 15


def test_every_declaration_validates_and_lints_without_errors(declared: Path) -> None:
    registry = toolctl.load_project(declared)
    assert sorted(registry.tools) == FUNCTIONS
    findings = registry.lint()
    errors = [d.format() for d in findings if d.severity is Severity.ERROR]
    assert errors == []


@pytest.mark.parametrize("name", FUNCTIONS)
def test_the_stub_input_runs_through_the_pipeline(declared: Path, name: str) -> None:
    """The adapter calls the function with the stub's input and returns output the declared
    outputSchema accepts (the pipeline checks it: outputValidation defaults to strict)."""
    registry = toolctl.load_project(declared)
    doc = yaml.safe_load((declared / "tools.d" / f"{name}.yaml").read_text("utf-8"))
    case = doc["tests"][0]
    result = registry.call(name, case["input"], store=False)
    assert result.status == "succeeded", (name, result.error)


def load(root: Path, name: str) -> dict:
    return yaml.safe_load((root / "tools.d" / f"{name}.yaml").read_text("utf-8"))


def test_literal_annotated_field_and_google_docstring(declared: Path) -> None:
    doc = load(declared, "search_docs")
    assert doc["description"].startswith("Search the documentation and return matching page")
    assert doc["handler"] == "search_docs_tool:handler"
    props = doc["inputSchema"]["properties"]
    assert props["query"] == {
        "description": 'Words to look for, e.g. "install extras".',
        "type": "string",
    }
    # Field(description=...) wins over the docstring; ge/le become minimum/maximum
    assert props["limit"] == {
        "description": "At most this many hits.",
        "type": "integer",
        "minimum": 1,
        "maximum": 50,
        "default": 10,
    }
    assert props["sort"]["enum"] == ["relevance", "date"]
    assert doc["inputSchema"]["required"] == ["query"]
    assert doc["inputSchema"]["additionalProperties"] is False
    # a list return is wrapped: structured content must be an object
    assert doc["outputSchema"]["properties"]["result"]["items"] == {"type": "string"}


def test_optional_is_not_required_and_has_no_null_noise(declared: Path) -> None:
    props = load(declared, "find_customer")["inputSchema"]
    assert props["required"] == ["customer_id"]
    assert props["properties"]["region"] == {
        "description": "Only look in this region (all regions when left out).",
        "type": "string",
    }
    stats = load(declared, "word_stats")["inputSchema"]["properties"]["min_length"]
    assert stats == {"description": "Only count words at least this long.", "type": "integer"}


def test_enum_numpy_docstring_and_defaults(declared: Path) -> None:
    doc = load(declared, "convert_temperature")
    source = doc["inputSchema"]["properties"]["source"]
    assert source == {
        "description": "The unit of `value`.",
        "type": "string",
        "enum": ["celsius", "fahrenheit"],
    }
    assert doc["inputSchema"]["properties"]["target"]["default"] == "celsius"
    assert doc["outputSchema"]["description"] == "The converted value and its unit."


def test_typeddict_and_rest_docstring(declared: Path) -> None:
    doc = load(declared, "format_address")
    address = doc["inputSchema"]["properties"]["address"]
    assert address["description"] == "The address to format."
    assert address["required"] == ["street", "city"]  # NotRequired[str] zip
    assert set(address["properties"]) == {"street", "city", "zip"}
    assert doc["inputSchema"]["properties"]["uppercase"]["description"].startswith("Write it")


def test_dataclass_with_attribute_docs(declared: Path) -> None:
    point = load(declared, "distance")["inputSchema"]["properties"]["a"]
    assert point["properties"]["x"] == {
        "description": "Horizontal position in metres.",
        "type": "number",
    }
    assert point["properties"]["y"]["default"] == 0.0
    assert point["required"] == ["x"]


def test_pydantic_model_in_and_out(declared: Path) -> None:
    doc = load(declared, "register_customer")
    customer = doc["inputSchema"]["properties"]["customer"]
    assert customer["properties"]["id"]["pattern"] == "^C[0-9]{4}$"
    assert customer["properties"]["name"]["minLength"] == 1
    assert customer["required"] == ["id", "name"]
    assert doc["outputSchema"]["type"] == "object"  # a model is an object: not wrapped
    registry = toolctl.load_project(declared)
    result = registry.call(
        "register_customer", {"customer": {"id": "C0042", "name": "Grace"}}, store=False
    )
    assert result.output == {"id": "C0042", "name": "Grace", "tags": ["registered"], "vip": False}


def test_recursive_dataclass_uses_defs(declared: Path) -> None:
    schema = load(declared, "count_nodes")["inputSchema"]
    assert schema["properties"]["tree"]["$ref"] == "#/$defs/TreeNode"
    node = schema["$defs"]["TreeNode"]
    assert node["properties"]["children"]["items"] == {"$ref": "#/$defs/TreeNode"}
    registry = toolctl.load_project(declared)
    tree = {
        "label": "a",
        "children": [{"label": "b"}, {"label": "c", "children": [{"label": "d"}]}],
    }
    assert registry.call("count_nodes", {"tree": tree}, store=False).output == {"result": 4}


def test_formats_sets_tuples_and_positional_only(declared: Path) -> None:
    props = load(declared, "schedule")["inputSchema"]["properties"]
    assert props["at"]["format"] == "date-time"
    assert props["attendees"]["uniqueItems"] is True
    assert props["room"]["format"] == "uuid"
    box = load(declared, "bounding_box")
    assert box["outputSchema"]["properties"]["result"]["maxItems"] == 4
    registry = toolctl.load_project(declared)
    out = registry.call("bounding_box", {"points": [[1, 2], [3, -1]]}, store=False).output
    assert out == {"result": [1, -1, 3, 2]}
    done = registry.call("set_priority", {"ticket": "T-1", "priority": 2}, store=False)
    assert done.status == "succeeded"  # `ticket, priority, /` are passed by position
    prio = load(declared, "set_priority")["inputSchema"]["properties"]
    assert prio["priority"]["enum"] == [1, 2]
    assert prio["note"]["description"] == "Why it changed."  # Annotated[str, "..."]


def test_async_function(declared: Path) -> None:
    registry = toolctl.load_project(declared)
    result = registry.call("fetch_status", {"service": "db", "verbose": True}, store=False)
    assert result.output == {"service": "db", "status": "up", "version": "1.2.3"}


def test_the_cli_lint_is_clean_of_errors(declared: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(declared)
    assert cli(["validate"]) == 0
    assert cli(["lint"]) == 0  # --fail-on error: warnings allowed (annotations to decide)


def test_a_symlink_loop_where_files_go_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = make_project(tmp_path)
    monkeypatch.chdir(root)
    (root / "loop").symlink_to("loop")
    (root / "loop.yaml").symlink_to("loop.yaml")
    ref = f"tests.scaffold.corpus:{FUNCTIONS[0]}"
    assert cli(["new", "--from", ref, "--handler-dir", "loop"]) == 2
    assert "cannot write loop/" in capsys.readouterr().err
    assert cli(["new", "--from", ref, "-o", "loop.yaml", "--force"]) == 2
    err = capsys.readouterr().err
    assert "cannot write loop.yaml" in err and "internal error" not in err
    assert list((root / "tools.d").iterdir()) == []


@pytest.mark.parametrize("name", ["../../escape", "a/b", "Bad Name!", ""])
def test_a_bad_name_is_a_usage_error_and_names_no_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    (tmp_path / "proj").mkdir()
    root = make_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    ref = f"tests.scaffold.corpus:{FUNCTIONS[0]}"
    assert cli(["new", "--from", ref, "--name", name]) == 2
    assert "is not a valid tool name" in capsys.readouterr().err
    assert list((root / "tools.d").iterdir()) == []
    assert sorted(p.name for p in tmp_path.iterdir()) == ["proj"]


def test_strings_that_look_like_numbers_stay_strings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Defaults and enum values such as "1e3", "0o17" or "yes" are quoted in the YAML written,
    so toolctl's loader (YAML 1.2 numbers) reads the strings the function declared."""
    root = make_project(tmp_path)
    (root / "handlers").mkdir()
    (root / "handlers" / "scaffold_numeric_words.py").write_text(
        "from typing import Literal\n\n\n"
        'def pick(size: str = "1e3", mode: Literal["0o17", "yes", "1_000"] = "yes") -> str:\n'
        '    """Pick a size."""\n'
        "    return size + mode\n",
        "utf-8",
    )
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root / "handlers"))
    assert cli(["new", "--from", "scaffold_numeric_words:pick"]) == 0
    props = toolctl.load_project(root).get("pick").input_schema["properties"]
    assert props["size"]["default"] == "1e3"
    assert props["mode"]["enum"] == ["0o17", "yes", "1_000"]
    assert props["mode"]["default"] == "yes"
