"""Handlers that misbehave in odd ways (issue 20, class 6): the run ends ``failed`` with a
bounded message, the history row is final, and toolctl itself never crashes (exit 1, not 3)."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

import toolctl
from toolctl.cli.app import run as cli
from toolctl.config import MAX_MEMORY_LIMIT_MB
from toolctl.registry import Registry
from toolctl.runtime.exctext import MAX_MESSAGE_CHARS, describe, message_of

Capture = pytest.CaptureFixture[str]

HANDLERS = """
class Unprintable(Exception):
    def __str__(self):
        raise RuntimeError("__str__ itself fails")


class Treacherous(dict):
    def items(self):
        raise RuntimeError("items() fails")

    def keys(self):
        raise RuntimeError("keys() fails")


def unprintable(data):
    raise Unprintable()


def treacherous(data):
    return Treacherous(a=1)


def huge(data):
    raise ValueError("x" * 20_000_000 + "END")
"""


def _tool(name: str) -> str:
    return f"toolctl: 1\nname: {name}\ndescription: Misbehaves.\nhandler: odd:{name}\n"


@pytest.fixture
def reg(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Registry:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "odd.py").write_text(textwrap.dedent(HANDLERS), encoding="utf-8")
    for name in ("unprintable", "treacherous", "huge"):
        (tmp_path / "tools.d" / f"{name}.yaml").write_text(_tool(name), encoding="utf-8")
    (tmp_path / "toolctl.yaml").write_text("tools: tools.d\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return toolctl.load(packs=False)


def test_an_exception_whose_str_raises_fails_the_run_and_ends_its_row(reg: Registry) -> None:
    result = reg.call("unprintable", {})
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "handler_error"
    assert result.error.message == "Unprintable: <str() failed>"
    stored = reg.get_run(result.run_id)
    assert stored.status == "failed"  # never left `running`


def test_a_returned_mapping_whose_items_raise_is_invalid_output(reg: Registry) -> None:
    result = reg.call("treacherous", {})
    assert result.status == "failed" and result.error is not None
    assert result.error.code == "invalid_output"
    assert "RuntimeError: items() fails" in result.error.message
    assert reg.get_run(result.run_id).status == "failed"


def test_a_20_mb_exception_message_is_cut_before_anything_else_sees_it(reg: Registry) -> None:
    result = reg.call("huge", {})
    assert result.status == "failed" and result.error is not None
    message = result.error.message
    assert message.startswith("ValueError: xxx") and "more characters)" in message
    assert len(message) < MAX_MESSAGE_CHARS + 100 and "END" not in message
    assert result.traceback is not None and len(result.traceback) < 20_000
    assert "more characters)" in result.traceback
    stored = reg.get_run(result.run_id)
    assert stored.status == "failed" and stored.error is not None
    assert len(stored.error.message) < MAX_MESSAGE_CHARS + 100


@pytest.mark.parametrize("name", ["unprintable", "treacherous", "huge"])
def test_the_cli_reports_odd_handler_failures_with_exit_1(
    reg: Registry, capsys: Capture, name: str
) -> None:
    capsys.readouterr()
    code = cli(["run", name, "--input", "{}"])
    err = capsys.readouterr().err
    assert code == 1 and f"{name} failed" in err and "internal error" not in err


def test_exception_text_is_bounded_and_never_raises() -> None:
    class Loud(Exception):
        def __str__(self) -> str:
            raise SystemError("boom")

    assert message_of(Loud()) == "<str() failed>"
    assert (
        describe(ValueError("a" * 5000), limit=10)
        == "ValueError: aaaaaaaaaa... (4990 more characters)"
    )


def test_a_memory_limit_past_int64_is_reported_by_validate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    # once set in the isolated child, it failed every call with "OverflowError" as a handler error
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "huge.yaml").write_text(_tool("huge"), encoding="utf-8")
    too_big = MAX_MEMORY_LIMIT_MB + 1
    (tmp_path / "toolctl.yaml").write_text(f"run:\n  memoryLimitMb: {too_big}\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    capsys.readouterr()
    code = cli(["validate"])
    err = capsys.readouterr().err
    assert code == 1
    assert f"toolctl.yaml:1:1: run.memoryLimitMb {too_big} is more than any process" in err
