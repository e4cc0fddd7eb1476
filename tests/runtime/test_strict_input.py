"""Tools with ``strict: true``: a model following the OpenAI-strict export sends ``null`` for the
optional arguments it leaves out; the runtime maps such a call back before validating it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from toolctl.cli.app import run as cli
from toolctl.registry import Registry
from toolctl.runtime import RunStatus


def test_nulls_for_left_out_optional_arguments_are_dropped(reg: Registry) -> None:
    sent = {"query": "tea", "limit": None, "cursor": None, "filters": None}
    result = reg.call("strict_search", sent)
    assert result.status is RunStatus.SUCCEEDED, result.error
    # limit and filters do not accept null: the model left them out. cursor is nullable as
    # declared, so its null is a real value and reaches the handler.
    assert result.output == {"query": "tea", "cursor": None}
    assert result.transcript["input"] == {"query": "tea", "cursor": None}


def test_nested_objects_are_mapped_back_too(reg: Registry) -> None:
    sent = {"query": "tea", "limit": 3, "cursor": "c", "filters": {"lang": None}}
    result = reg.call("strict_search", sent)
    assert result.output == {"query": "tea", "limit": 3, "cursor": "c", "filters": {}}


def test_a_null_for_a_required_argument_is_still_invalid(reg: Registry) -> None:
    result = reg.call("strict_search", {"query": None, "limit": None})
    assert result.status is RunStatus.FAILED and result.error is not None
    assert result.error.code == "invalid_input"
    assert [d["path"] for d in result.error.details] == ["/query"]


def test_tools_without_strict_keep_their_nulls(reg: Registry) -> None:
    result = reg.call("echo", {"msg": None})
    assert result.error is not None and result.error.code == "invalid_input"


def test_toolctl_run_accepts_a_strict_call(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = '{"query": "tea", "limit": null, "cursor": null, "filters": null}'
    code = cli(["run", "strict_search", "--input", args, "--raw"])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert json.loads(out) == {"query": "tea", "cursor": None}


def test_a_strict_call_without_nulls_reaches_the_handler_unchanged(reg: Registry) -> None:
    sent = {"query": "tea", "limit": 3, "filters": {"lang": "en"}}
    result = reg.call("strict_search", sent)
    assert result.status is RunStatus.SUCCEEDED, result.error
    assert result.output == sent
