"""The run-history setting (``state:``, ``TOOLCTL_STATE``, ``--state``): a URL toolctl cannot
store runs in is an error naming where it came from, never a file path created silently."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolctl.cli.app import run


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "tools.d").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("TOOLCTL_STATE", raising=False)
    return tmp_path


@pytest.mark.parametrize("url", ["mysql://u@db.example/runs", "sqlite:///runs.db"])
def test_a_url_of_another_database_is_refused_everywhere(
    project: Path, url: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    scheme = url.split(":")[0]
    assert run(["runs", "list", "--state", url]) == 2
    assert f"--state: {scheme}:// is not a run history" in capsys.readouterr().err
    monkeypatch.setenv("TOOLCTL_STATE", url)
    assert run(["runs", "list"]) == 1
    assert f"TOOLCTL_STATE: {scheme}:// is not a run history" in capsys.readouterr().err
    monkeypatch.delenv("TOOLCTL_STATE")
    (project / "toolctl.yaml").write_text(f"state: {url}\n")
    assert run(["runs", "list"]) == 1
    err = capsys.readouterr().err
    assert f"toolctl.yaml:1:1: state: {scheme}:// is not a run history" in err
    assert sorted(p.name for p in project.iterdir()) == ["toolctl.yaml", "tools.d"]


def test_a_file_named_like_a_scheme_is_still_a_file(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(["runs", "list", "--state", "postgres_runs.db"]) == 0
    assert "no runs recorded" in capsys.readouterr().err


def test_a_state_path_that_is_a_symlink_loop_is_no_crash(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (project / "loop.db").symlink_to("loop.db")
    monkeypatch.setenv("TOOLCTL_STATE", "loop.db")
    assert run(["runs", "list"]) == 0
    assert "internal error" not in capsys.readouterr().err
