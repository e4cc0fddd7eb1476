"""Approval: flags, approvers, persisted pending runs, and binding to definition and input."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path
from typing import Any

import pytest

import toolctl
from toolctl.registry import Registry
from toolctl.runtime import RunStateError, RunStatus, api


def store(reg: Registry) -> Any:
    return api.resolve_store(reg)


def test_without_decision_the_run_waits_with_its_raw_input(reg: Registry, events: list) -> None:
    result = reg.call("approve_echo", {"msg": "hi"})
    assert result.status is RunStatus.AWAITING_APPROVAL
    assert result.error is not None and result.error.code == "approval_required"
    assert result.run_id in result.error.message
    assert events == []
    rec = store(reg).get(result.run_id)
    assert rec.status == "awaiting_approval" and rec.raw_input == {"msg": "hi"}


def test_approve_runs_it_once_and_clears_raw_input(reg: Registry, events: list) -> None:
    pending = reg.call("approve_echo", {"msg": "hi"})
    done = reg.approve(pending.run_id)
    assert done.status is RunStatus.SUCCEEDED and done.output == {"msg": "hi"}
    rec = store(reg).get(pending.run_id)
    assert rec.status == "succeeded" and rec.raw_input is None
    assert rec.approval["approved"] is True and rec.approval["by"] == "user"
    with pytest.raises(RunStateError, match="not awaiting approval"):
        reg.approve(pending.run_id)
    assert [e for e in events if e[0] == "handler"] == [("handler", {"msg": "hi"})]


def test_decline_ends_the_run_and_the_handler_never_runs(reg: Registry, events: list) -> None:
    pending = reg.call("approve_echo", {"msg": "hi"})
    result = reg.decline(pending.run_id, "not today")
    assert result.status is RunStatus.DECLINED and result.error is not None
    assert result.error.code == "declined" and "not today" in result.error.message
    rec = store(reg).get(pending.run_id)
    assert rec.status == "declined" and rec.raw_input is None
    with pytest.raises(RunStateError):
        reg.approve(pending.run_id)
    assert events == []


def test_flags(reg: Registry) -> None:
    assert reg.call("approve_echo", {"msg": "a"}, approve=True).status is RunStatus.SUCCEEDED
    declined = reg.call("approve_echo", {"msg": "a"}, decline="no")
    assert declined.status is RunStatus.DECLINED
    assert store(reg).get(declined.run_id).status == "declined"


def test_approver_sees_the_display_transformed_input(reg: Registry, events: list) -> None:
    import rt_handlers

    result = asyncio.run(reg.acall("approve_echo", {"msg": "hi"}, approver=rt_handlers.approve_all))
    assert result.status is RunStatus.SUCCEEDED
    assert ("approver", "say hi") in events
    assert result.display["approval"] == "say hi"  # no approval transform: the input's form
    assert result.transcript["approval"] == "approve saying hi?"
    no = reg.call("approve_echo", {"msg": "hi"}, approver=rt_handlers.decline_all)
    assert no.status is RunStatus.DECLINED
    later = reg.call("approve_echo", {"msg": "hi"}, approver=rt_handlers.leave_pending)
    assert later.status is RunStatus.AWAITING_APPROVAL


def test_approval_is_bound_to_the_tool_definition(project: Path, reg: Registry) -> None:
    pending = reg.call("approve_echo", {"msg": "hi"})
    tool_file = project / "tools.d" / "flow.yaml"
    tool_file.write_text(
        tool_file.read_text().replace("Echo after approval.", "Echo after approval (changed).")
    )
    changed = toolctl.load()
    with pytest.raises(RunStateError, match="tool definition changed"):
        changed.approve(pending.run_id)
    assert store(changed).get(pending.run_id).status == "awaiting_approval"
    assert changed.decline(pending.run_id).status is RunStatus.DECLINED


def test_tampered_input_is_refused(reg: Registry, events: list) -> None:
    pending = reg.call("approve_echo", {"msg": "hi"})
    db = sqlite3.connect(store(reg).path)
    db.execute(
        "UPDATE runs SET raw_input = ? WHERE run_id = ?", ('{"msg": "rm -rf ~"}', pending.run_id)
    )
    db.commit()
    db.close()
    with pytest.raises(RunStateError, match="input hash mismatch"):
        reg.approve(pending.run_id)
    assert events == []


def test_suspended_approved_run_needs_reapproval_after_a_change(
    project: Path, reg: Registry
) -> None:
    pending = reg.call("deploy", {"target": "prod"})
    suspended = reg.approve(pending.run_id)
    assert suspended.status is RunStatus.SUSPENDED
    tool_file = project / "tools.d" / "flow.yaml"
    tool_file.write_text(
        tool_file.read_text().replace(
            "Needs approval, then asks a question.", "Needs approval (v2)."
        )
    )
    changed = toolctl.load()
    with pytest.raises(RunStateError, match="re-approval required") as info:
        changed.resume(pending.run_id, {"answer": "yes"})
    assert info.value.hint == f"toolctl approve {pending.run_id}"
    again = changed.approve(pending.run_id)
    assert again.status is RunStatus.SUSPENDED
    done = changed.resume(pending.run_id, {"answer": "yes"})
    assert done.status is RunStatus.SUCCEEDED
    assert done.output == {"target": "prod", "answer": "yes"}


def test_decline_and_approve_race_only_one_wins(reg: Registry) -> None:
    pending = reg.call("approve_echo", {"msg": "hi"})
    reg.decline(pending.run_id)
    with pytest.raises(RunStateError):
        reg.decline(pending.run_id)


def test_history_off_keeps_pending_runs_in_process(reg: Registry) -> None:
    pending = reg.call("approve_echo", {"msg": "hi"}, store=False)
    assert pending.status is RunStatus.AWAITING_APPROVAL
    done = reg.approve(pending.run_id, store=False)
    assert done.status is RunStatus.SUCCEEDED
    assert not reg.project.state_path.exists()  # type: ignore[union-attr]


def test_a_failing_approver_leaves_the_run_waiting(reg: Registry, events: list) -> None:
    def broken(request: Any) -> bool:
        raise ConnectionError("client went away")

    result = reg.call("approve_echo", {"msg": "hi"}, approver=broken)
    assert result.status is RunStatus.AWAITING_APPROVAL
    assert any("approver failed" in n for n in result.notes)
    assert events == []
