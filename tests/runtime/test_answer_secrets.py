"""The secret fields of a form a handler asks for (``ctx.elicit``/``ctx.ask``: ``writeOnly``,
``x-sensitive`` or a secret-like name in its ``requestedSchema``) never leave the process: not
in the stored resume view, not in the next round's suspend payload as a model, a person or the
history sees it, not in an error, a log record or a traceback, whichever round quotes them and
whichever process resumes the run.
"""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import toolctl
from toolctl.runtime import clientask

PIN = "8-3-1-4-7-2"
TOKEN = "tk-5550199-delta"
TOOL = """toolctl: 1
name: vault
description: Asks for a PIN, then for a confirmation, then fails quoting the PIN.
handler: vaulttools:vault
"""
HANDLER = """
import logging

PIN_FORM = {
    "type": "object",
    "properties": {
        "pin": {"type": "string", "writeOnly": True},
        "%s": {"type": "string"},
        "note": {"type": "string"},
    },
}
CONFIRM = {"type": "object", "properties": {"ok": {"type": "boolean"}}}


def vault(data, ctx):
    first = ctx.elicit("Your PIN?", PIN_FORM, key="pin")
    ctx.elicit("Sure?", CONFIRM, key="confirm")
    pin = first["content"]["pin"]
    logging.getLogger("vaulttools").warning("unlocking with %%s / %%s", pin, first["content"])
    raise RuntimeError(f"the vault refused PIN {pin} ({first['content']})")
"""


@pytest.fixture
def registry(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "toolctl.yaml").write_text("tools: tools.d\npythonPath: [.]\n")
    (tmp_path / "tools.d" / "vault.yaml").write_text(TOOL)
    (tmp_path / "vaulttools.py").write_text(HANDLER % "api_token")
    monkeypatch.chdir(tmp_path)
    return toolctl.load(project=tmp_path)


def _answer(key: str, content: dict[str, Any]) -> dict[str, Any]:
    return {key: {"action": "accept", "content": content}}


def _history_text(root: Path) -> str:
    """Every value of every row of every table of the run history."""
    found = sorted((root / ".toolctl").rglob("*.db"))
    assert found, "the run history was not written"
    rows: list[str] = []
    with sqlite3.connect(found[0]) as db:
        tables = [r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")]
        for table in tables:
            rows.extend(repr(row) for row in db.execute(f"SELECT * FROM {table}"))
    return "\n".join(rows)


def _shown(result: Any) -> str:
    """What a model or a person is shown of a result (not ``output``/``suspend_payload``,
    the raw values handed back to the application)."""
    return json.dumps(
        [result.model_output, result.display, result.transcript, result.notes, result.traceback]
        + ([result.error.to_dict()] if result.error else []),
        default=str,
    )


def test_secret_form_answers_stay_inside_across_rounds(
    registry: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    first = registry.call("vault", {})
    assert first.status.value == "suspended"
    content = {"pin": PIN, "api_token": TOKEN, "note": "from the hall"}
    # round 2: the PIN answered, the confirmation asked; a new registry, as another process
    again = toolctl.load(project=tmp_path)
    second = again.resume(first.run_id, {clientask.ANSWERS_KEY: _answer("pin", content)})
    assert second.status.value == "suspended", second.error
    # the raw payload (for the application) carries the earlier answer and its form's schema
    asked = clientask.pending_requests(second.suspend_payload)
    assert asked is not None and asked[1]["pin"]["content"]["pin"] == PIN
    assert clientask.answer_schemas(second.suspend_payload)["pin"]
    # round 3, in yet another process: every answer, and the handler fails quoting the PIN
    answers = {**_answer("pin", content), **_answer("confirm", {"ok": True})}
    with caplog.at_level(logging.WARNING):
        third = toolctl.load(project=tmp_path).resume(
            first.run_id, {clientask.ANSWERS_KEY: answers}
        )
    assert third.status.value == "failed"
    assert "the vault refused PIN" in (third.error.message if third.error else "")
    for shown in (_shown(second), _shown(third), _history_text(tmp_path), caplog.text):
        assert PIN not in shown
        assert TOKEN not in shown
    assert "from the hall" in _history_text(tmp_path)  # the rest of the answer is kept


def test_run_answer_keeps_its_own_earlier_answers() -> None:
    """``answering`` (``run --answer``, test cases) is shown the scrubbed payload: the answers
    it gave itself are what it resumes with, not the payload's scrubbed copies."""
    pin_form = clientask.elicitation("PIN?", {"type": "object", "properties": {}})
    given = _answer("pin", {"pin": PIN})
    on_suspend = clientask.answering({**given, **_answer("confirm", {"ok": True})})
    payload = {
        clientask.REQUESTS_KEY: {"confirm": pin_form},
        clientask.ANSWERED_KEY: _answer("pin", {"pin": "[REDACTED]"}),
    }
    data = on_suspend(payload, None)
    assert data is not None
    assert data[clientask.ANSWERS_KEY]["pin"]["content"]["pin"] == PIN
