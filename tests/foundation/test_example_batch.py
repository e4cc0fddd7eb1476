"""Input examples checked together (``toolctl.examplebatch``): the same verdicts, messages and
locations as checking each tool alone, with the cache and without."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from toolctl import examplebatch
from toolctl.loader import load_registry

from .conftest import write

TOOL = """\
toolctl: 1
name: {name}
description: Look up a city's weather.
inputSchema:
  type: object
  properties:
    city: {{$ref: "schemas/common.schema.yaml#/$defs/City"}}
{defs}
inputExamples:
  - input: {{city: Paris}}
  - input: {example}
"""
SCHEMA = "$defs:\n  City: {type: string, minLength: 2, pattern: '^[A-Z]'}\n"


def _tool(name: str, example: str = "{city: Rome}", defs: str = "") -> str:
    return TOOL.format(name=name, example=example, defs=defs)


def _project(tmp_path: Path, tools: dict[str, str]) -> Path:
    files = {f"tools.d/{name}.yaml": text for name, text in tools.items()}
    files |= {"toolctl.yaml": "tools: tools.d\n", "tools.d/schemas/common.schema.yaml": SCHEMA}
    return write(tmp_path / "proj", files)


@pytest.fixture(params=["walk", "chunks"])
def way(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Each test twice: examples settled by the walk of each value where it decides, and with
    the walk deciding nothing (every tool through the chunks, as for a schema it declines)."""
    if request.param == "chunks":
        from toolctl import schema

        monkeypatch.setattr(schema, "walk_accepts", lambda schema, instances: False)
    return str(request.param)


def _load(root: Path, monkeypatch: pytest.MonkeyPatch, cache: bool) -> Any:
    monkeypatch.chdir(root)
    monkeypatch.setenv("TOOLCTL_CACHE_DIR", str(root / "cache"))
    registry = load_registry(packs=False, cache=cache)
    return sorted(registry.tools), [d.format() for d in registry.diagnostics]


@pytest.mark.parametrize("chunk", [2, examplebatch.CHUNK])
def test_one_wrong_example_among_many_is_the_only_one_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, chunk: int, way: str
) -> None:
    monkeypatch.setattr(examplebatch, "CHUNK", chunk)
    tools = {f"t{i}": _tool(f"t{i}") for i in range(5)}
    tools["t3"] = _tool("t3", example="{city: paris}")  # the pattern wants a capital
    root = _project(tmp_path, tools)
    plain = _load(root, monkeypatch, cache=False)
    names, diagnostics = plain
    assert names == ["t0", "t1", "t2", "t4"]  # the tool with a wrong example is left out
    [message] = diagnostics
    assert message.startswith("tools.d/t3.yaml:11:19:")
    assert "TC304" in message and "input example does not match inputSchema at /city" in message
    # cold (the entries are written after the batch is settled) and warm say the same
    assert _load(root, monkeypatch, cache=True) == plain
    assert _load(root, monkeypatch, cache=True) == plain


OWN = """\
toolctl: 1
name: {name}
description: Look up a code.
inputSchema:
  type: object
  properties:
    code: {{$ref: "#/$defs/Code"}}
  $defs:
    Code: {{type: string, maxLength: {longest}}}
inputExamples:
  - input: {{code: x1}}
"""


def test_own_definitions_of_the_same_name_keep_their_own_meaning(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    # both tools name a definition Code; only b's refuses "x1"
    tools = {"a": OWN.format(name="a", longest=9), "b": OWN.format(name="b", longest=1)}
    names, diagnostics = _load(_project(tmp_path, tools), monkeypatch, cache=False)
    assert names == ["a"]
    [message] = diagnostics
    assert message.startswith("tools.d/b.yaml:11:19:") and "at /code" in message


def test_valid_examples_of_many_tools_compile_one_validator(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, way: str
) -> None:
    from toolctl import schema

    made: list[Any] = []
    real = schema.make_validator
    monkeypatch.setattr(schema, "make_validator", lambda s: made.append(s) or real(s))
    root = _project(tmp_path, {f"t{i}": _tool(f"t{i}") for i in range(4)})
    names, diagnostics = _load(root, monkeypatch, cache=False)
    assert (names, diagnostics) == (["t0", "t1", "t2", "t3"], [])
    if way == "walk":
        assert made == []  # each example walked: nothing compiled at all
        return
    [combined] = made  # the shared City once, the four tools beside it
    assert sorted(combined["$defs"]) == ["common_schema__City"] + [
        f"toolctl.example.{i}" for i in range(4)
    ]


def test_a_wrong_example_is_walked_then_checked_alone_with_its_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The walk only accepts: a wrong example goes on to the chunk and then to its tool's own
    check, whose message and position are the user's."""
    from toolctl import schema

    made: list[Any] = []
    real = schema.make_validator
    monkeypatch.setattr(schema, "make_validator", lambda s: made.append(s) or real(s))
    tools = {f"t{i}": _tool(f"t{i}") for i in range(3)}
    tools["t1"] = _tool("t1", example="{city: P}")  # minLength 2
    names, diagnostics = _load(_project(tmp_path, tools), monkeypatch, cache=False)
    assert names == ["t0", "t2"]
    [message] = diagnostics
    assert message.startswith("tools.d/t1.yaml:11:19:")
    assert "input example does not match inputSchema at /city" in message
    assert len(made) == 2  # the chunk of the one tool the walk did not accept, then the tool
