"""Rate limits (``limits: {callsPerMinute: N}``) in process: the bucket arithmetic, per caller
and tool, the toolctl.yaml default, the ``rate_limited`` result, and config errors."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolctl
from toolctl.errors import ConfigError
from toolctl.principal import Principal
from toolctl.registry import Registry
from toolctl.runtime import RunStatus, api
from toolctl.runtime.ratelimit import LocalBuckets

from .conftest import FIXTURES, write_project

TOOLS = """\
toolctl: 1
tools:
  - name: twice
    description: At most two calls a minute per caller.
    handler: rt_handlers:echo
    limits: {callsPerMinute: 2}
  - name: defaulted
    description: Takes the project's default limit.
    handler: rt_handlers:echo
"""

ALICE = Principal("https://idp.example", "alice")
BOB = Principal("https://idp.example", "bob")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _registry(root: Path, monkeypatch: pytest.MonkeyPatch, config: str = "") -> Registry:
    write_project(root, {"limited.yaml": TOOLS})
    if config:
        with (root / "toolctl.yaml").open("a") as fh:
            fh.write(config)
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(FIXTURES))
    return toolctl.load()


@pytest.fixture
def reg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    return _registry(tmp_path / "proj", monkeypatch, "limits: {callsPerMinute: 1}\n")


def test_a_bucket_allows_a_burst_of_n_then_one_every_60_over_n_seconds() -> None:
    clock = Clock()
    buckets = LocalBuckets(clock)
    assert [buckets.take_call("b", 3) for _ in range(3)] == [0.0, 0.0, 0.0]
    wait = buckets.take_call("b", 3)
    assert wait == pytest.approx(20.0)  # the next call frees up in 60/3 s
    clock.now += 19.0
    assert buckets.take_call("b", 3) == pytest.approx(1.0)  # refused calls take nothing
    clock.now += 1.0
    assert buckets.take_call("b", 3) == 0.0
    assert buckets.take_call("b", 3) > 0
    assert buckets.take_call("other", 3) == 0.0  # buckets are independent


def test_the_call_past_the_limit_is_refused_with_rate_limited(reg: Registry) -> None:
    assert [reg.call("twice", {}).status for _ in range(2)] == [RunStatus.SUCCEEDED] * 2
    refused = reg.call("twice", {})
    assert refused.status is RunStatus.FAILED
    assert refused.error is not None and refused.error.code == "rate_limited"
    message = refused.error.message
    assert "twice allows 2 call(s) a minute per caller" in message
    assert "retry in 30 s" in message  # one call frees up every 60/2 s
    assert refused.error.details[0]["retryAfter"] == 30
    assert refused.model_output == {"type": "text", "value": refused.error.text()}


def test_a_refused_call_is_not_recorded(reg: Registry) -> None:
    for _ in range(3):
        last = reg.call("twice", {"n": 1})
    assert last.error is not None and last.error.code == "rate_limited"
    store = api.resolve_store(reg)
    assert len(store.query(limit=10)) == 2
    with pytest.raises(toolctl.ToolctlError):
        store.get(last.run_id)


def test_each_principal_has_its_own_bucket_and_the_local_caller_another(reg: Registry) -> None:
    for who in (ALICE, ALICE):
        assert reg.call("twice", {}, principal=who).status is RunStatus.SUCCEEDED
    assert reg.call("twice", {}, principal=ALICE).error.code == "rate_limited"  # type: ignore[union-attr]
    assert reg.call("twice", {}, principal=BOB).status is RunStatus.SUCCEEDED
    assert reg.call("twice", {}).status is RunStatus.SUCCEEDED  # no principal: the local bucket
    # another tool's calls are counted apart
    assert reg.call("defaulted", {}, principal=ALICE).status is RunStatus.SUCCEEDED


def test_the_project_default_applies_to_tools_without_their_own(reg: Registry) -> None:
    assert reg.call("defaulted", {}).status is RunStatus.SUCCEEDED
    refused = reg.call("defaulted", {})
    assert refused.error is not None and refused.error.code == "rate_limited"
    assert "defaulted allows 1 call(s) a minute" in refused.error.message
    assert "retry in 60 s" in refused.error.message


def test_without_limits_nothing_is_limited(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    reg = _registry(tmp_path / "free", monkeypatch)
    assert {reg.call("defaulted", {}).status for _ in range(20)} == {RunStatus.SUCCEEDED}


def test_with_history_off_the_limit_still_holds(reg: Registry) -> None:
    statuses = [reg.call("twice", {}, store=False).status for _ in range(3)]
    assert statuses == [RunStatus.SUCCEEDED, RunStatus.SUCCEEDED, RunStatus.FAILED]


def test_approving_a_pending_run_does_not_charge_it_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    gated = TOOLS + (
        "  - name: gated\n    description: Approved calls.\n    handler: rt_handlers:echo\n"
        "    requireApproval: true\n    limits: {callsPerMinute: 1}\n"
    )
    root = tmp_path / "gated"
    write_project(root, {"limited.yaml": gated})
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(FIXTURES))
    reg = toolctl.load()
    pending = reg.call("gated", {})
    assert pending.status is RunStatus.AWAITING_APPROVAL
    assert reg.approve(pending.run_id).status is RunStatus.SUCCEEDED
    assert reg.call("gated", {}).error.code == "rate_limited"  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ("limits: {callsPerMinute: 0}\n", "limits.callsPerMinute must be a positive whole number"),
        ("limits: {callsPerMinute: fast}\n", "limits.callsPerMinute must be a positive whole"),
        ("limits: {perHour: 5}\n", "limits must be a mapping with callsPerMinute"),
        ("limits: 5\n", "limits must be a mapping with callsPerMinute"),
    ],
)
def test_a_bad_limits_setting_is_a_clear_config_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, config: str, says: str
) -> None:
    with pytest.raises(ConfigError, match=says) as info:
        _registry(tmp_path / "bad", monkeypatch, config)
    assert "toolctl.yaml" in info.value.message
    assert "callsPerMinute" in (info.value.hint or "")


def test_a_bad_tool_limit_is_a_located_format_error(tmp_path: Path) -> None:
    root = write_project(tmp_path / "proj", {"limited.yaml": TOOLS.replace("2}", "0}")})
    registry = toolctl.load(root / "tools.d", strict=False, packs=False)
    bad = [d for d in registry.diagnostics if d.file and d.file.endswith("limited.yaml")]
    assert bad and bad[0].line == 6, [str(d) for d in registry.diagnostics]


def test_a_store_without_weak_references_still_gets_its_own_buckets() -> None:
    from toolctl.runtime.history.capabilities import Capabilities
    from toolctl.runtime.ratelimit import buckets_for

    class Slotted:
        __slots__ = ()
        capabilities = Capabilities(history=False)

    one, two = Slotted(), Slotted()
    assert buckets_for(one) is buckets_for(one)
    assert buckets_for(one) is not buckets_for(two)
