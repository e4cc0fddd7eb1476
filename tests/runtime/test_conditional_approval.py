"""``requireApproval: {when: schema}``: approval only when the schema matches
``{input, context, principal, annotations}``; a bad condition is a located load error."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolctl
from toolctl.principal import Principal
from toolctl.registry import Registry
from toolctl.runtime import RunStatus

from .conftest import write_project

TOOLS = """\
toolctl: 1
tools:
  - name: pay
    description: Pays an amount; large amounts need approval.
    handler: rt_handlers:echo
    inputSchema:
      type: object
      properties: {amount: {type: number}, note: {type: string, default: none}}
    requireApproval:
      when:
        properties:
          input: {properties: {amount: {exclusiveMinimum: 100}}, required: [amount]}
  - name: wipe
    description: Destructive unless the caller holds the admin scope.
    handler: rt_handlers:echo
    mcp: {annotations: {destructiveHint: true}}
    requireApproval:
      when:
        anyOf:
          - properties: {principal: {type: "null"}}
          - properties:
              principal:
                properties: {scopes: {not: {contains: {const: admin}}}}
  - name: by_context
    description: Approval for the production tenant only.
    handler: rt_handlers:echo
    requireApproval:
      when: {properties: {context: {properties: {env: {const: prod}}, required: [env]}}}
"""

ALICE = Principal("https://idp.example", "alice", "app", frozenset({"read"}))
ADMIN = Principal("https://idp.example", "root", "app", frozenset({"admin", "read"}))


@pytest.fixture
def reg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    root = write_project(tmp_path / "proj", {"cond.yaml": TOOLS})
    monkeypatch.chdir(root)
    from .conftest import FIXTURES

    monkeypatch.syspath_prepend(str(FIXTURES))
    return toolctl.load()


def test_a_call_the_condition_does_not_match_runs_without_approval(reg: Registry) -> None:
    small = reg.call("pay", {"amount": 5})
    assert small.status is RunStatus.SUCCEEDED
    assert small.output == {"amount": 5, "note": "none"}


def test_a_call_the_condition_matches_waits_for_approval(reg: Registry) -> None:
    large = reg.call("pay", {"amount": 500})
    assert large.status is RunStatus.AWAITING_APPROVAL
    assert large.error is not None and large.error.code == "approval_required"
    done = reg.approve(large.run_id)
    assert done.status is RunStatus.SUCCEEDED and done.output["amount"] == 500


def test_decline_and_approve_flags_still_decide_a_matching_call(reg: Registry) -> None:
    assert reg.call("pay", {"amount": 500}, decline=True).status is RunStatus.DECLINED
    assert reg.call("pay", {"amount": 500}, approve=True).status is RunStatus.SUCCEEDED
    # an unmatched call needs no decision: a decline up front does not apply to it
    assert reg.call("pay", {"amount": 1}, decline=True).status is RunStatus.SUCCEEDED


def test_the_condition_sees_the_principal_and_its_scopes(reg: Registry) -> None:
    assert reg.call("wipe", {}).status is RunStatus.AWAITING_APPROVAL  # the local operator
    assert reg.call("wipe", {}, principal=ALICE).status is RunStatus.AWAITING_APPROVAL
    assert reg.call("wipe", {}, principal=ADMIN).status is RunStatus.SUCCEEDED


def test_the_condition_sees_the_request_context(reg: Registry) -> None:
    assert reg.call("by_context", {}, context={"env": "dev"}).status is RunStatus.SUCCEEDED
    prod = reg.call("by_context", {}, context={"env": "prod"})
    assert prod.status is RunStatus.AWAITING_APPROVAL


def test_a_bad_when_schema_is_a_located_load_error(tmp_path: Path) -> None:
    bad = TOOLS.replace("exclusiveMinimum: 100", "exclusiveMinimum: lots")
    root = write_project(tmp_path / "bad", {"cond.yaml": bad})
    registry = toolctl.load(root / "tools.d", strict=False, packs=False)
    found = [d for d in registry.diagnostics if d.code == "TC301"]
    assert found, registry.diagnostics
    where = found[0]
    assert where.file is not None and where.file.endswith("cond.yaml")
    assert where.line == 12  # the exclusiveMinimum line inside requireApproval.when
    assert "requireApproval.when is not a valid JSON Schema" in where.message


def test_a_when_that_is_not_a_schema_shape_is_a_format_error(tmp_path: Path) -> None:
    bad = TOOLS.replace("    requireApproval:\n      when:", "    requireApproval:\n      if:", 1)
    root = write_project(tmp_path / "bad", {"cond.yaml": bad})
    registry = toolctl.load(root / "tools.d", strict=False, packs=False)
    lines = {(d.file, d.line) for d in registry.diagnostics}
    assert any(f and f.endswith("cond.yaml") and line in (9, 10) for f, line in lines), lines
    assert "pay" not in [s.name for s in registry]


HOSTILE = "^(?!x)(a|a)+$"  # lookahead: the backtracking fallback, exponential on "aaa...!"


def test_a_condition_that_cannot_be_decided_asks_for_approval(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # approval "unless the text is safe": a crafted text that makes the pattern run out of the
    # call's validation budget must not read as "does not match" and skip approval
    tool = f"""\
toolctl: 1
name: post
description: Posts text; approval unless it matches the safe pattern.
handler: rt_handlers:echo
inputSchema: {{type: object, properties: {{s: {{type: string}}}}}}
requireApproval:
  when: {{properties: {{input: {{properties: {{s: {{not: {{pattern: "{HOSTILE}"}}}}}}}}}}}}
"""
    root = write_project(tmp_path / "proj", {"post.yaml": tool})
    with (root / "toolctl.yaml").open("a") as fh:
        fh.write("run: {validationBudgetMs: 50}\n")
    monkeypatch.chdir(root)
    from .conftest import FIXTURES

    monkeypatch.syspath_prepend(str(FIXTURES))
    reg = toolctl.load()
    assert reg.call("post", {"s": "aaaa"}).status is RunStatus.SUCCEEDED  # matches: no approval
    assert reg.call("post", {"s": "hello"}).status is RunStatus.AWAITING_APPROVAL
    crafted = reg.call("post", {"s": "a" * 40 + "!"})
    assert crafted.status is RunStatus.AWAITING_APPROVAL
    assert any("could not be decided" in note for note in crafted.notes)
