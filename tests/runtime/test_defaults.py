"""Schema ``default``s reach the handler: filled into its input before it runs, on every front
end (they share the pipeline), without changing the caller's object."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path
from typing import Any

import pytest

import toolctl
from toolctl.cli.app import run as cli
from toolctl.runtime import RunStatus
from toolctl.schemadefaults import fill_defaults, has_defaults

HANDLERS = """
def echo(input):
    return {"got": input}

def repeat(input):
    # reads the defaulted argument the way a newcomer writes it: no .get()
    return {"text": input["word"] * input["count"]}
"""

TOOLS = """
toolctl: 1
tools:
  - name: repeat
    description: Repeat a word.
    handler: dh:repeat
    inputSchema:
      type: object
      properties:
        word: {type: string, maxLength: 5}
        count: {type: integer, minimum: 0, maximum: 5, default: 2}
      required: [word]
    tests:
      - name: count left out
        input: {word: ab}
        output: {text: abab}
  - name: nested
    description: Echo with nested defaults.
    handler: dh:echo
    inputSchema:
      type: object
      $defs:
        Unit: {type: string, enum: [c, f], default: c}
      properties:
        where:
          type: object
          properties:
            unit: {$ref: "#/$defs/Unit"}
            days: {type: integer, default: 1}
        stops:
          type: array
          items:
            type: object
            properties:
              wait: {type: number, default: 0.5}
  - name: required_default
    description: Echo a required argument that has a default.
    handler: dh:echo
    inputSchema:
      type: object
      properties:
        mode: {enum: [fast, slow], default: fast}
      required: [mode]
      additionalProperties: false
    tests:
      - name: mode left out
        input: {}
        output: {got: {mode: fast}}
  - name: raw_args
    description: Echo exactly what was sent.
    handler: dh:echo
    applyDefaults: false
    inputSchema:
      type: object
      properties:
        count: {type: integer, default: 2}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "proj"
    (root / "tools.d").mkdir(parents=True)
    (root / "handlers").mkdir()
    (root / "handlers" / "dh.py").write_text(HANDLERS, encoding="utf-8")
    (root / "tools.d" / "tools.yaml").write_text(textwrap.dedent(TOOLS), encoding="utf-8")
    (root / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [handlers]\n", encoding="utf-8")
    monkeypatch.chdir(root)
    return root


def test_a_left_out_argument_reaches_the_handler_with_its_default(project: Path) -> None:
    result = toolctl.load().call("repeat", {"word": "ab"}, store=False)
    assert result.status is RunStatus.SUCCEEDED, result.error
    assert result.output == {"text": "abab"}


def test_a_given_argument_wins_over_the_default(project: Path) -> None:
    result = toolctl.load().call("repeat", {"word": "ab", "count": 3}, store=False)
    assert result.output == {"text": "ababab"}


def test_nested_defaults_through_ref_and_items(project: Path) -> None:
    sent: dict[str, Any] = {"where": {}, "stops": [{}, {"wait": 2}]}
    result = toolctl.load().call("nested", sent, store=False)
    assert result.status is RunStatus.SUCCEEDED, result.error
    assert result.output == {
        "got": {"where": {"unit": "c", "days": 1}, "stops": [{"wait": 0.5}, {"wait": 2}]}
    }
    assert sent == {"where": {}, "stops": [{}, {"wait": 2}]}  # the caller's object is untouched


def test_apply_defaults_false_passes_the_arguments_as_sent(project: Path) -> None:
    result = toolctl.load().call("raw_args", {}, store=False)
    assert result.output == {"got": {}}


def test_toolctl_run_fills_defaults(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli(["run", "repeat", "--input", '{"word": "x"}', "--raw"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out) == {"text": "xx"}


def test_toolctl_test_cases_see_defaults(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code = cli(["test", "repeat", "--format", "json"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    report = json.loads(out)
    assert any(r["outcome"] == "passed" for r in report["results"])


def test_fuzzing_a_tool_with_defaults_finds_no_crash(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # the fuzzer leaves `count` out of many valid inputs; the handler indexes it directly
    code = cli(["test", "repeat", "--fuzz", "20", "--seed", "1", "--no-examples"])
    out, err = capsys.readouterr()
    assert code == 0, out + err


def test_fuzzing_knows_a_required_argument_with_a_default_may_be_left_out(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # leaving `mode` out is no invalid input: the pipeline fills it in, so the fuzzer must not
    # expect invalid_input for it
    # validate accepts the case that leaves `mode` out (it runs with the default filled in)
    assert cli(["validate"]) == 0
    code = cli(["test", "required_default", "--fuzz", "20", "--seed", "3", "--no-examples"])
    out, err = capsys.readouterr()
    assert code == 0, out + err
    result = toolctl.load().call("required_default", {}, store=False)
    assert result.output == {"got": {"mode": "fast"}}


def test_fill_defaults_copies_only_what_changes() -> None:
    schema = {
        "type": "object",
        "properties": {
            "a": {"type": "object", "properties": {"x": {"default": [1]}}},
            "b": {"type": "object", "properties": {"y": {"type": "string"}}},
        },
    }
    given: dict[str, Any] = {"a": {}, "b": {"y": "k"}}
    filled = fill_defaults(schema, given)
    assert filled == {"a": {"x": [1]}, "b": {"y": "k"}}
    assert given == {"a": {}, "b": {"y": "k"}}
    assert filled["b"] is given["b"]  # unchanged parts are shared, not copied
    filled["a"]["x"].append(2)
    assert schema["properties"]["a"]["properties"]["x"]["default"] == [1]  # type: ignore[index]


def test_all_of_branches_and_the_one_fitting_any_of_branch() -> None:
    schema = {
        "allOf": [{"properties": {"a": {"default": 1}}}, {"properties": {"b": {"default": 2}}}],
        "properties": {
            "opt": {
                "anyOf": [
                    {"type": "object", "properties": {"deep": {"default": True}}},
                    {"type": "string"},
                ]
            },
            "both": {
                "oneOf": [
                    {"type": "object", "properties": {"p": {"default": 1}}},
                    {"type": "object", "properties": {"q": {"default": 2}}},
                ]
            },
        },
    }
    filled = fill_defaults(schema, {"opt": {}, "both": {}})
    # both oneOf branches accept an object: which default applies is ambiguous, so none does
    assert filled == {"a": 1, "b": 2, "opt": {"deep": True}, "both": {}}
    assert fill_defaults(schema, {"opt": "s"})["opt"] == "s"


def test_a_ref_cycle_ends() -> None:
    schema = {
        "$defs": {
            "Node": {
                "type": "object",
                "properties": {"next": {"$ref": "#/$defs/Node"}, "v": {"default": 0}},
            }
        },
        "$ref": "#/$defs/Node",
    }
    assert fill_defaults(schema, {"next": {"next": {}}}) == {
        "v": 0,
        "next": {"v": 0, "next": {"v": 0}},
    }
    loop = {"$defs": {"A": {"$ref": "#/$defs/A"}}, "$ref": "#/$defs/A"}
    assert fill_defaults(loop, {}) == {}


def test_has_defaults() -> None:
    assert has_defaults({"properties": {"a": {"items": {"default": 1}}}})
    assert not has_defaults({"properties": {"a": {"type": "string"}}})


def test_an_mcp_client_that_leaves_an_argument_out_gets_its_default(project: Path) -> None:
    pytest.importorskip("mcp", reason="the mcp extra is not installed")
    import anyio

    async def call() -> Any:
        from mcp import Client

        from toolctl.server.app import ToolServer
        from toolctl.server.toolset import build_toolset

        server = ToolServer(build_toolset(toolctl.load()))
        async with Client(server.lowlevel, mode="legacy") as client:
            return await client.call_tool("repeat", {"word": "ab"})

    result = anyio.run(call)
    assert not result.is_error, result
    assert result.structured_content == {"text": "abab"} or "abab" in result.content[0].text
