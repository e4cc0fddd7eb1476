"""`toolctl init`: a new project that validates, tests and lints clean at once, through the real
command line; existing files are never overwritten."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolctl.cli.app import run as cli
from toolctl.spec import format_schema

TOOLCTL = str(Path(sys.executable).with_name("toolctl"))


def sh(command: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        command,
        shell=True,
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env={"PATH": f"{Path(TOOLCTL).parent}:/usr/bin:/bin", "NO_COLOR": "1"},
    )


# slow: starts toolctl processes (mark @pytest.mark.slow once the marker exists)
def test_init_then_validate_and_test_pass(tmp_path: Path) -> None:
    done = sh("toolctl init && toolctl validate && toolctl test && toolctl lint", tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok: 1 tool(s) in tools.d" in done.stderr
    assert "3 passed, 0 failed" in done.stdout
    created = {p.relative_to(tmp_path).as_posix() for p in tmp_path.rglob("*") if p.is_file()}
    assert {
        "toolctl.yaml",
        "tools.d/greet.yaml",
        "handlers/greeting.py",
        "schema/tool.v1.schema.json",
        ".gitignore",
    } <= created


def test_init_into_a_new_directory(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "proj"
    assert cli(["init", str(target)]) == 0
    assert f"cd {target} && toolctl validate" in capsys.readouterr().err
    assert (target / "tools.d" / "greet.yaml").is_file()


def test_the_modeline_points_at_the_shipped_schema(tmp_path: Path) -> None:
    assert cli(["init", str(tmp_path)]) == 0
    first = (tmp_path / "tools.d" / "greet.yaml").read_text("utf-8").splitlines()[0]
    assert first == "# yaml-language-server: $schema=../schema/tool.v1.schema.json"
    target = (tmp_path / "tools.d" / first.split("$schema=")[1]).resolve()
    assert json.loads(target.read_text("utf-8")) == format_schema()


def test_gitignore_is_appended_not_replaced(tmp_path: Path) -> None:
    (tmp_path / ".gitignore").write_text("*.pyc", "utf-8")
    assert cli(["init", str(tmp_path)]) == 0
    lines = (tmp_path / ".gitignore").read_text("utf-8").splitlines()
    assert lines[0] == "*.pyc"
    assert ".toolctl/" in lines
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / ".gitignore").write_text(".toolctl/\n", "utf-8")
    assert cli(["init", str(tmp_path / "other")]) == 0
    assert (tmp_path / "other" / ".gitignore").read_text("utf-8") == ".toolctl/\n"


@pytest.mark.parametrize("existing", ["toolctl.yaml", "tools.d/greet.yaml", "handlers/greeting.py"])
def test_refuses_to_overwrite_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], existing: str
) -> None:
    path = tmp_path / existing
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("mine\n", "utf-8")
    assert cli(["init", str(tmp_path)]) == 2  # a usage error: nothing about the registry
    err = capsys.readouterr().err
    assert f"not initialising over existing files: {existing}" in err
    assert "Traceback" not in err
    assert path.read_text("utf-8") == "mine\n"
    assert not (tmp_path / "schema").exists()
    assert not (tmp_path / ".gitignore").exists()


def test_refuses_a_project_configured_in_pyproject(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.toolctl]\ntools = "t"\n', "utf-8")
    assert cli(["init", str(tmp_path)]) == 2
    assert not (tmp_path / "toolctl.yaml").exists()


def test_a_file_where_a_directory_must_be_is_a_usage_error_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "handlers").write_text("not a directory\n", "utf-8")
    assert cli(["init", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "not initialising over existing files: handlers/greeting.py" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["handlers"]
    blocker = tmp_path / "handlers"
    assert cli(["init", str(blocker)]) == 2
    assert f"{blocker}: not a directory" in capsys.readouterr().err


def test_a_write_that_fails_midway_leaves_nothing_behind(tmp_path: Path) -> None:
    from toolctl.errors import UsageError
    from toolctl.scaffold.newtool import write_files

    (tmp_path / "blocker").write_text("a file\n", "utf-8")
    first = tmp_path / "tools.d" / "t.yaml"
    with pytest.raises(UsageError, match=r"cannot write .*blocker"):
        write_files({first: "x\n", tmp_path / "blocker" / "h.py": "y\n"})
    assert not first.exists()


@pytest.mark.skipif(not Path("/proc/self").is_dir(), reason="needs Linux /proc")
def test_an_unwritable_place_is_a_usage_error_not_a_crash(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # /proc refuses new entries whoever runs the test (root included).
    assert cli(["init", "/proc/toolctl-init-test"]) == 2
    err = capsys.readouterr().err
    assert "cannot write /proc/toolctl-init-test/toolctl.yaml" in err
    assert "internal error" not in err and "Traceback" not in err


def test_init_into_a_symlink_loop_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    loop = tmp_path / "loop"
    loop.symlink_to("loop")
    assert cli(["init", str(loop)]) == 2
    assert f"{loop}: not a directory" in capsys.readouterr().err
