"""Regressions for the examples of issue 20, class 1: a secret under an applicator the old walk
missed, a secret in a suspend question, and the walk itself on each applicator and ``$ref``
form (unit level)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import toolctl
from toolctl.cli.app import run as cli
from toolctl.runtime import api
from toolctl.runtime.redact import REDACTED, redact, redactor_for
from toolctl.sensitive import sensitive_map, shown_schema

SECRET = "S3CR3T-code-98765"
TOOLS = """\
toolctl: 1
tools:
  - name: check_codes
    description: Checks recovery codes (secrets) and fails, quoting one.
    handler: regress_handlers:check_codes
    inputSchema:
      type: object
      properties:
        codes: {type: array, items: {type: string, x-sensitive: true}}
      required: [codes]
  - name: confirm_pin
    description: Suspends with a question that quotes a secret it was given.
    handler: regress_handlers:confirm_pin
    inputSchema:
      type: object
      properties:
        pin: {$ref: "#/$defs/the%20pin"}
      $defs:
        the pin: {type: string, writeOnly: true}
    resumeSchema:
      type: object
      properties: {ok: {type: boolean}}
  - name: issue_key
    description: Returns an API key (a secret output field) with an id.
    handler: regress_handlers:issue_key
    inputSchema: {type: object}
    outputSchema:
      type: object
      properties:
        id: {type: integer}
        apiKey: {type: string, x-sensitive: true}
    tests:
      - name: a case whose expectation is wrong, so its report shows the actual output
        input: {}
        output: {id: 2, apiKey: expected-key}
  - name: use_session
    description: Uses a session token from the request context and a PIN from resume data.
    handler: regress_handlers:use_session
    inputSchema: {type: object}
    requestContextSchema:
      type: object
      properties:
        session: {type: object, patternProperties: {"^tok": {type: string, x-sensitive: true}}}
    resumeSchema:
      type: object
      properties:
        pins: {type: array, prefixItems: [{type: string, writeOnly: true}]}
"""
HANDLERS = """\
def check_codes(args):
    raise ValueError(f"code {args['codes'][0]} was already used")


def confirm_pin(args, ctx):
    if ctx.resumed:
        return {"done": True}
    ctx.suspend({"question": f"Use PIN {args['pin']}?"})


def use_session(args, ctx):
    if not ctx.resumed:
        ctx.suspend({"question": "PIN?"})
    token = ctx.request_context["session"]["tok1"]
    raise RuntimeError(f"token {token} and pin {ctx.resume_data['pins'][0]} were refused")


def issue_key(args):
    return {"id": 1, "apiKey": "S3CR3T-issued-key-555"}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "t.yaml").write_text(TOOLS, "utf-8")
    (tmp_path / "regress_handlers.py").write_text(HANDLERS, "utf-8")
    (tmp_path / "toolctl.yaml").write_text("tools: tools.d\npythonPath: ['.']\n", "utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def _rows(project: Path) -> str:
    store = api.resolve_store(toolctl.load_project(project))
    con = sqlite3.connect(store.path)
    try:
        return json.dumps(con.execute("SELECT * FROM runs").fetchall(), default=str)
    finally:
        con.close()


def test_a_secret_array_item_never_reaches_the_error_history_or_traceback(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = json.dumps({"codes": [SECRET]})
    assert cli(["run", "check_codes", "-i", args, "--traceback"]) == 1
    out, err = capsys.readouterr()
    assert "ValueError: code [REDACTED] was already used" in err and "Traceback" in err
    assert SECRET not in out + err
    run_id = json.loads(_rows_json(project))[0]
    assert cli(["runs", "show", run_id, "--format", "json"]) == 0
    shown, _ = capsys.readouterr()
    assert "[REDACTED]" in shown and SECRET not in shown and SECRET not in _rows(project)


def _rows_json(project: Path) -> str:
    store = api.resolve_store(toolctl.load_project(project))
    con = sqlite3.connect(store.path)
    try:
        return json.dumps([r[0] for r in con.execute("SELECT run_id FROM runs")])
    finally:
        con.close()


def test_a_suspend_question_quoting_a_secret_is_scrubbed_shown_and_stored(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli(["run", "confirm_pin", "-i", json.dumps({"pin": SECRET})]) == 4
    out, err = capsys.readouterr()
    assert "Use PIN [REDACTED]?" in err and SECRET not in out + err
    rows = _rows(project)
    assert "Use PIN [REDACTED]?" in rows
    # The raw input stays (bound by MAC) only while the run is pending, to resume it with.
    assert cli(["resume", out.strip(), "--data", '{"ok": true}']) == 0
    assert SECRET not in _rows(project)


def test_a_failing_test_case_report_never_prints_a_secret_output(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for argv in (["test", "-t", "issue_key"], ["test", "-t", "issue_key", "--format", "json"]):
        assert cli(argv) == 1
        out, err = capsys.readouterr()
        assert "apiKey" in out + err and "S3CR3T-issued-key-555" not in out + err


def test_request_context_and_resume_secrets_are_scrubbed(project: Path) -> None:
    token, pin = "S3CR3T-session-tok", "S3CR3T-resume-pin"
    registry = toolctl.load_project(project)
    first = registry.call("use_session", {}, context={"session": {"tok1": token}})
    done = registry.resume(first.run_id, {"pins": [pin]})
    assert done.error is not None and done.error.message.count("[REDACTED]") == 2
    assert token not in json.dumps(done.to_dict()) and pin not in json.dumps(done.to_dict())
    assert token not in _rows(project) and pin not in _rows(project)


def test_a_secret_split_across_streamed_deltas_is_scrubbed(project: Path) -> None:
    from toolctl.runtime.streaming import InputStream

    registry = toolctl.load_project(project)
    stream = InputStream(registry, "check_codes")
    text = json.dumps({"codes": [SECRET]})
    for i in range(0, len(text), 5):
        stream.feed(text[i : i + 5])
    result = stream.finish()
    assert result.error is not None and "inputDelta" in result.transcript
    assert SECRET not in json.dumps(result.transcript) + json.dumps(result.display)
    assert SECRET not in _rows(project)


LEAF: dict[str, Any] = {"type": "string", "x-sensitive": True}


R = REDACTED


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        ({"items": LEAF}, ["aaa", "bbb"], [R, R]),
        (
            {"patternProperties": {"^pin": LEAF}},
            {"pin1": "aaa", "x": "bbb"},
            {"pin1": R, "x": "bbb"},
        ),
        (
            {"if": {"required": ["k"]}, "then": {"properties": {"k": LEAF}}},
            {"k": "aaa"},
            {"k": R},
        ),
        (
            {"if": {"required": ["k"]}, "else": {"properties": {"j": LEAF}}},
            {"j": "aaa"},
            {"j": R},
        ),
        ({"dependentSchemas": {"k": {"properties": {"k": LEAF}}}}, {"k": "aaa"}, {"k": R}),
        (
            {"properties": {"n": {}}, "unevaluatedProperties": LEAF},
            {"n": "aaa", "z": "bbb"},
            {"n": "aaa", "z": R},
        ),
        ({"prefixItems": [{}], "unevaluatedItems": LEAF}, ["aaa", "bbb"], ["aaa", R]),
        ({"contains": LEAF}, ["aaa"], [R]),
        ({"items": [{}, LEAF]}, ["aaa", "bbb"], ["aaa", R]),  # draft-07 tuple
        ({"items": [{}], "additionalItems": LEAF}, ["aaa", "bbb"], ["aaa", R]),
        (
            {"properties": {"p": {"$ref": "#pin"}}, "$defs": {"x": {**LEAF, "$anchor": "pin"}}},
            {"p": "aaa"},
            {"p": R},
        ),
        (
            {"properties": {"p": {"$ref": "#/$defs/the%20pin"}}, "$defs": {"the pin": LEAF}},
            {"p": "aaa"},
            {"p": R},
        ),
        (
            {"properties": {"p": {"$ref": "#/$defs/a~1b~0c"}}, "$defs": {"a/b~c": LEAF}},
            {"p": "aaa"},
            {"p": R},
        ),
        (
            {
                "properties": {"p": {"$dynamicRef": "#pin"}},
                "$defs": {"x": {**LEAF, "$dynamicAnchor": "pin"}},
            },
            {"p": "aaa"},
            {"p": R},
        ),
        (
            {"properties": {"p": {"not": {"type": "integer", "writeOnly": True}}}},
            {"p": "aaa"},
            {"p": R},
        ),
        ({"propertyNames": LEAF}, {"name": "aaa"}, {"name": "aaa"}),  # names are not values
    ],
)
def test_the_walk_finds_each_location(schema: dict[str, Any], value: Any, expected: Any) -> None:
    assert redact(value, schema) == expected
    # What is hidden by field is what the run registers as its secret values.
    assert redactor_for(schema).secret_values(value) == _hidden(value, expected)


def _hidden(value: Any, expected: Any) -> set[str]:
    if expected == R:
        return {value}
    if isinstance(value, dict):
        return {s for k, v in value.items() for s in _hidden(v, expected[k])}
    if isinstance(value, list):
        return {s for v, e in zip(value, expected, strict=True) for s in _hidden(v, e)}
    return set()


def test_not_marks_its_value_as_secret() -> None:
    schema = {"properties": {"p": {"not": {"type": "integer", "writeOnly": True}}}}
    assert redact({"p": "abc"}, schema) == {"p": REDACTED}


def test_a_sensitive_output_field_is_pruned_and_left_out_of_the_schema() -> None:
    schema = {
        "type": "object",
        "properties": {
            "id": {"type": "string"},
            "key": {"$ref": "#/$defs/Key"},
            "tags": {"type": "array", "items": {"type": "string", "writeOnly": True}},
        },
        "required": ["id", "key"],
        "additionalProperties": False,
        "$defs": {"Key": {"type": "string", "x-sensitive": True}},
    }
    value = {"id": "a", "key": "k-123", "tags": ["t1"]}
    assert sensitive_map(schema).prune(value) == {"id": "a", "tags": []}
    shown = shown_schema(schema)
    assert "key" not in shown["properties"] and shown["required"] == ["id"]
    assert "key" in schema["properties"], "the declared schema is not modified"
    from toolctl.schema import cached_validator

    assert cached_validator(shown).errors(sensitive_map(schema).prune(value)) == []


def test_a_reference_cycle_ends() -> None:
    schema = {
        "$ref": "#/$defs/A",
        "$defs": {"A": {"$ref": "#/$defs/B"}, "B": {"$ref": "#/$defs/A"}},
    }
    assert redact({"x": "abc"}, {**schema, "properties": {"y": LEAF}}) == {"x": "abc"}


def test_a_deeply_nested_schema_is_walked_without_recursion() -> None:
    schema: dict[str, Any] = {"properties": {"p": LEAF}}
    for _ in range(5000):
        schema = {"allOf": [schema]}
    assert redact({"p": "abcd", "q": "x"}, schema) == {"p": R, "q": "x"}
    assert sensitive_map(schema).prune({"p": "abcd", "q": "x"}) == {"q": "x"}
