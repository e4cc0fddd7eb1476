"""Data-driven `toolctl validate` cases: tests/fixtures/tools.d/{valid,invalid}/<case>/.

See tests/fixtures/tools.d/README.md for the layout of a case.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from toolctl.cli.app import run

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tools.d"
CASES = sorted(
    p for kind in ("valid", "invalid") for p in (FIXTURES / kind).iterdir() if p.is_dir()
)
_DIAG = re.compile(r"^(\S+:\d+:\d+: (?:error|warning|info) [A-Z]+\d+)(?: (.*))?$")


def _split(line: str) -> tuple[str, str]:
    match = _DIAG.match(line)
    assert match, f"not a diagnostic line: {line!r}"
    return match.group(1), match.group(2) or ""


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_validate_prints_expected_diagnostics(
    case: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(case)
    code = run(["validate", "--no-packs"])
    err = capsys.readouterr().err
    printed = [line for line in err.splitlines() if _DIAG.match(line)]
    expected = (case / "expected.txt").read_text("utf-8").splitlines()
    assert len(printed) == len(expected), err
    for got, want in zip(printed, expected, strict=True):
        got_prefix, got_rest = _split(got)
        want_prefix, want_rest = _split(want)
        assert got_prefix == want_prefix, err
        assert want_rest in got_rest, err
    assert code == (0 if case.parent.name == "valid" else 1), err
    assert err.splitlines()[-1].startswith("ok: " if code == 0 else f"{len(expected)} error(s)")


@pytest.mark.parametrize("case", CASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_validate_json_agrees_with_text(
    case: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(case)
    code = run(["validate", "--no-packs", "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    expected = (case / "expected.txt").read_text("utf-8").splitlines()
    assert report["status"] == ("ok" if code == 0 else "fail")
    got = [
        f"{d['file']}:{d['line']}:{d['col']}: {d['severity']} {d['code']}"
        for d in report["diagnostics"]
    ]
    assert got == [_split(line)[0] for line in expected]
    names = case / "tools.txt"
    if names.exists():
        assert report["tools"] == names.read_text("utf-8").split()
