"""The release workflow's build steps, run here: `python -m build` and `twine check --strict` on
the tracked files (with secrets planted beside them, as in a developer's checkout), then the
wheel in a fresh environment runs the mission commands (.github/release_smoke.sh).

Slow: builds in an isolated environment (hatchling from the package index or pip's cache) and
starts toolctl processes. The fresh environment gets the wheel without its dependencies and
borrows them from this one (a path entry, not a site directory, so this checkout's editable
install stays out of it): the test needs no network beyond the build backend.
"""

from __future__ import annotations

import secrets
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import zipfile
from pathlib import Path

import pytest

import toolctl
from tests.docs.pages import ROOT
from tests.release.test_metadata import workflow

# one worker builds dist/ once for all three tests (the module-scoped fixture would be built
# again on every pytest-xdist worker that runs one of them)
pytestmark = [pytest.mark.slow, pytest.mark.timeout(600), pytest.mark.xdist_group("release")]

# what a developer's checkout may hold beside the tracked files; none of it may be published
PLANTED = [".env", ".env.local", "tools.d/.env", ".toolctl/state.db.key", "deploy.pem"]
MARKER = secrets.token_hex(16)  # their content: found in no file that is published


def _step(command: str) -> str:
    """The build job's `run:` step that starts with ``command``."""
    runs = [step.get("run", "") for step in workflow()["jobs"]["build"]["steps"]]
    found = [run for run in runs if run.startswith(command)]
    assert len(found) == 1, f"the release workflow has no single step {command!r}"
    return str(found[0])


def _sh(command: str, cwd: Path, timeout: float = 300) -> subprocess.CompletedProcess[str]:
    # `python` in the workflow is the job's interpreter; here, this environment's
    bin_dir = Path(sys.executable).parent
    env_path = f"{bin_dir}:{Path('/usr/bin')}:{Path('/bin')}"
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env={"PATH": env_path, "HOME": str(cwd), "NO_COLOR": "1", "LANG": "C.UTF-8"},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


@pytest.fixture(scope="module")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """dist/ as the workflow's build step leaves it, built from a copy of the tracked files."""
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("builds from the tracked files of a git checkout")
    tree = tmp_path_factory.mktemp("checkout")
    tracked = (
        subprocess.run(
            ["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True, timeout=60
        )
        .stdout.decode("utf-8")
        .split("\0")
    )
    for name in filter(None, tracked):
        if (ROOT / name).is_file():
            (tree / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, tree / name)
    for name in PLANTED:
        (tree / name).parent.mkdir(parents=True, exist_ok=True)
        (tree / name).write_text(f"SECRET_TOKEN={MARKER}\n")
    built = _sh(_step("python -m build"), tree, timeout=540)
    assert built.returncode == 0, built.stdout + built.stderr
    return tree / "dist"


def test_build_and_twine_check_are_clean(dist: Path) -> None:
    names = sorted(p.name for p in dist.iterdir())
    version = toolctl.__version__
    assert names == [
        f"toolctl_registry-{version}-py3-none-any.whl",
        f"toolctl_registry-{version}.tar.gz",
    ]
    checked = _sh(_step("python -m twine check --strict"), dist.parent)
    assert checked.returncode == 0, checked.stdout + checked.stderr
    assert checked.stdout.count("PASSED") == 2


def test_no_planted_secret_is_published(dist: Path) -> None:
    (sdist,) = dist.glob("*.tar.gz")
    (wheel,) = dist.glob("*.whl")
    with tarfile.open(sdist) as archive:
        in_sdist = [name.split("/", 1)[1] for name in archive.getnames() if "/" in name]
        leaked = [
            member.name
            for member in archive.getmembers()
            if member.isfile() and MARKER.encode() in archive.extractfile(member).read()  # type: ignore[union-attr]
        ]
    with zipfile.ZipFile(wheel) as archive:
        in_wheel = archive.namelist()
        leaked += [n for n in in_wheel if MARKER.encode() in archive.read(n)]
    assert leaked == []
    for name in PLANTED:
        assert name not in in_sdist
    assert not [n for n in in_sdist + in_wheel if n.endswith((".key", ".pem", ".env"))]
    assert not [n for n in in_wheel if not n.startswith(("toolctl/", "toolctl_registry-"))]
    assert "LICENSE" in in_sdist and "tools.d/weather.yaml" in in_sdist
    assert "toolctl/spec/tool.v1.schema.json" in in_wheel  # what `validate` enforces


def test_the_wheel_runs_the_mission_commands_in_a_fresh_environment(
    dist: Path, tmp_path: Path
) -> None:
    (wheel,) = dist.glob("*.whl")
    venv = tmp_path / "fresh"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120
    )
    python = venv / "bin" / "python"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
         "--no-index", "--quiet", str(wheel)],
        capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    here = {sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]}
    (Path(site) / "borrowed_deps.pth").write_text("\n".join(sorted(here)) + "\n")
    where = subprocess.run(
        [str(python), "-c", "import toolctl; print(toolctl.__file__)"],
        capture_output=True, text=True, check=True, timeout=60,
    ).stdout.strip()  # fmt: skip
    assert where.startswith(str(venv)), "the wheel's toolctl, not this checkout's"
    smoke = _sh(f"{ROOT / '.github' / 'release_smoke.sh'} {venv / 'bin'}", tmp_path)
    assert smoke.returncode == 0, smoke.stdout + smoke.stderr
    lines = smoke.stdout.splitlines()
    assert lines[0] == f"toolctl {toolctl.__version__}"
    assert lines[-1] == "release_smoke: ok"
    reports = smoke.stderr.splitlines()  # validate and lint report on stderr
    assert reports.count("ok: 1 tool(s) in tools.d") == 2
