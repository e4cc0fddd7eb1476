"""``toolctl init`` and ``toolctl new`` at the edges (issue 20, class 7): no write through a
dangling symbolic link, no tool file the loader would skip, no default that is not JSON."""

from __future__ import annotations

from pathlib import Path

import pytest

import toolctl
from tests.cli_helpers import Capture
from tests.cli_helpers import toolctl as call_in_process
from tests.scaffold import corpus
from toolctl.cli.app import run as cli

REF = f"tests.scaffold.corpus:{corpus.register_customer.__name__}"
REPO = Path(__file__).resolve().parents[2]


def _cli(capsys: Capture, *argv: str) -> tuple[int, str]:
    code, _, err = call_in_process(capsys, *argv)
    return code, err


def _project(root: Path) -> Path:
    root.mkdir()
    (root / "toolctl.yaml").write_text(
        f"tools: tools.d\npythonPath: [handlers, {REPO.as_posix()}]\n", "utf-8"
    )
    (root / "tools.d").mkdir()
    return root


@pytest.mark.parametrize("where", [".gitignore", "toolctl.yaml", "tools.d", "handlers"])
def test_init_refuses_a_dangling_symlink_and_writes_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture, where: str
) -> None:
    root, outside = tmp_path / "proj", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    (root / where).symlink_to(outside / "target")
    monkeypatch.chdir(root)
    code, err = _cli(capsys, "init")
    assert code == 2
    assert f"{root / where} is a symbolic link to {outside / 'target'}, which does not exist" in err
    assert f"rm {root / where}" in err
    assert list(outside.iterdir()) == []  # nothing created through the link
    assert sorted(p.name for p in root.iterdir()) == [where]  # nor anything else


def test_new_refuses_a_dangling_symlink_where_the_tool_file_goes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    root = _project(tmp_path / "proj")
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / "tools.d" / "register_customer.yaml").symlink_to(outside / "planted.yaml")
    monkeypatch.chdir(root)
    for extra in ([], ["--force"]):
        code, err = _cli(capsys, "new", "--from", REF, *extra)
        assert code == 2 and "not writing through it" in err
    assert list(outside.iterdir()) == []


@pytest.mark.parametrize(
    ("args", "problem"),
    [
        (["--name", ".hidden"], "hidden files"),
        (["--name", "."], "hidden files"),
        (["--name", "customer.schema"], "are schemas, not tools"),
        (["-o", "tools.d/.draft.yaml"], "hidden files"),
        (["-o", "tools.d/customer.json"], "only .yaml and .yml files are tool files"),
        (["-o", "tools.d/_drafts/customer.yaml"], "start with '.' or '_' are skipped"),
    ],
)
def test_new_refuses_a_tool_file_the_loader_would_skip(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture, args: list[str], problem: str
) -> None:
    root = _project(tmp_path / "proj")
    monkeypatch.chdir(root)
    code, err = _cli(capsys, "new", "--from", REF, *args)
    assert code == 2 and problem in err and "hint:" in err
    assert [p for p in root.rglob("*") if p.is_file()] == [root / "toolctl.yaml"]


NONFINITE = '''
def measure(level: float = float("nan"), ceiling: float = float("inf"), floor: float = 0.5) -> str:
    """Measure something."""
    return "ok"
'''


def test_new_leaves_out_a_nan_or_infinite_default_and_reports_the_gap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: Capture
) -> None:
    root = _project(tmp_path / "proj")
    (root / "handlers").mkdir()
    (root / "handlers" / "scaffold_nonfinite.py").write_text(NONFINITE, "utf-8")
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(root / "handlers"))
    capsys.readouterr()
    assert cli(["new", "--from", "scaffold_nonfinite:measure"]) == 1  # gaps: exit 1, as ever
    err = capsys.readouterr().err
    text = (root / "tools.d" / "measure.yaml").read_text("utf-8")
    assert ".nan" not in text and ".inf" not in text
    assert "gap: parameter 'level': the default nan is not JSON; left out" in err
    assert "gap: parameter 'ceiling': the default inf is not JSON; left out" in err
    props = toolctl.load_project(root).get("measure").input_schema["properties"]
    assert "default" not in props["level"] and "default" not in props["ceiling"]
    assert props["floor"]["default"] == 0.5
    assert _cli(capsys, "validate")[0] == 0
