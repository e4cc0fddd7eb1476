"""``toolctl run --answer KEY=JSON``: a handler that asks the client (ctx.elicit, ctx.sample)
answered from the command line, in as many rounds as it asks."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolctl.cli.app import run

TOOL = """toolctl: 1
name: survey
description: Asks for a form, then the client's model.
handler: surveytools:survey
"""
HANDLER = """
def survey(data, ctx):
    form = {"type": "object", "properties": {"name": {"type": "string"}}}
    who = ctx.elicit("Who is asking?", form)
    reply = ctx.sample([{"role": "user", "content": {"type": "text", "text": "Say hi"}}])
    return {"name": who["content"]["name"], "reply": reply["content"]["text"]}
"""
FORM = 'elicitation={"action": "accept", "content": {"name": "Ada"}}'
MODEL = 'sampling={"role": "assistant", "model": "m", "content": {"type": "text", "text": "hi"}}'


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [.]\n")
    (tmp_path / "tools.d" / "survey.yaml").write_text(TOOL)
    (tmp_path / "surveytools.py").write_text(HANDLER)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_answers_on_the_command_line_complete_every_round(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["run", "survey", "--answer", FORM, "--answer", MODEL]) == 0
    assert json.loads(capsys.readouterr().out) == {"name": "Ada", "reply": "hi"}


def test_a_missing_answer_leaves_the_run_suspended_with_what_it_asks(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["run", "survey", "--answer", FORM]) == 4
    err = capsys.readouterr().err
    assert "sampling/createMessage" in err and "suspended" in err


def test_an_answer_that_is_not_json_is_a_usage_error(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["run", "survey", "--answer", "elicitation=yes"]) == 2
    err = capsys.readouterr().err
    assert "--answer 'elicitation=yes'" in err and "KEY=JSON" in err
