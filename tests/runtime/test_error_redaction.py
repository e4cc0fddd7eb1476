"""Validation error details quote values: secrets in them are redacted before anyone sees them."""

from __future__ import annotations

import json
from pathlib import Path

import toolctl

REPO = Path(__file__).resolve().parents[2]
TOOL = """\
toolctl: 1
name: echo_secret
description: Takes a credential and a count; used to check what error details reveal.
handler: toolctl_examples.reverse:reverse
inputSchema:
  type: object
  properties:
    api_key: {type: number}
    token: {type: string, x-sensitive: true, maxLength: 3}
    note: {type: integer}
"""


def _registry(tmp_path: Path) -> toolctl.Registry:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "t.yaml").write_text(TOOL, "utf-8")
    (tmp_path / "toolctl.yaml").write_text(f"pythonPath: [{REPO / 'examples'}]\n", "utf-8")
    return toolctl.load_project(tmp_path)


def test_invalid_input_details_never_quote_a_secret(tmp_path: Path) -> None:
    registry = _registry(tmp_path)
    result = registry.call(
        "echo_secret",
        {
            "api_key": "Bearer abcdefghijklmnopqrstuvwx",
            "token": "hunter2-long",
            "note": "sk-abcdefghijklmnopqrstuvwxyz0123",
        },
        store=False,
    )
    assert result.status.value == "failed"
    assert result.error is not None and result.error.code == "invalid_input"
    shown = json.dumps(result.to_dict())
    for secret in ("abcdefghijklmnopqrstuvwx", "hunter2", "sk-abcdefghijklmnop"):
        assert secret not in shown
    paths = {d["path"] for d in result.error.details}
    assert paths == {"/api_key", "/token", "/note"}  # each field still named, with its keyword


def test_ordinary_values_are_still_quoted(tmp_path: Path) -> None:
    result = _registry(tmp_path).call("echo_secret", {"note": "seven"}, store=False)
    assert result.error is not None
    assert "'seven' is not of type 'integer'" in result.error.details[0]["message"]
