"""Run what a documentation page shows: write its files, run its console commands, compare.

A page section holds code blocks whose first line names a file (``# tools.d/x.yaml``,
``# text_tools.py``) and ``console`` blocks of ``$ command`` lines, each followed by the output
it prints. :func:`write_files` writes the files into a directory; :func:`run_console` runs the
commands there, in order, through the installed ``toolctl``, and returns (command, shown,
actual) for each. ``export NAME=VALUE`` steps set the variable for the steps after them.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.test_readme_run import RUN_ID, exported, normalise, steps

ROOT = Path(__file__).resolve().parents[2]
FILE_BLOCK = re.compile(r"```(?:yaml|python)\n# (\S+\.(?:ya?ml|py))\n(.*?)```", re.S)

TIMING = re.compile(r" in \d+\.\d+s\b")

Step = tuple[str, list[str], list[str]]


def project_metadata() -> dict[str, Any]:
    """The ``[project]`` table of pyproject.toml."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - tomli is a dependency below 3.11
        import tomli as tomllib
    data: dict[str, Any] = tomllib.loads((ROOT / "pyproject.toml").read_text("utf-8"))
    return dict(data["project"])


def section(page: str, marker: str) -> str:
    """The text between ``<!-- marker -->`` and ``<!-- /marker -->`` on docs/``page``."""
    text = (ROOT / "docs" / page).read_text("utf-8")
    return text.split(f"<!-- {marker} -->", 1)[1].split(f"<!-- /{marker} -->", 1)[0]


def files(text: str) -> dict[str, str]:
    """Every code block that names its file: path → content (the naming comment included)."""
    return {m.group(1): f"# {m.group(1)}\n{m.group(2)}" for m in FILE_BLOCK.finditer(text)}


def write_files(text: str, root: Path) -> dict[str, str]:
    """Write the section's files under ``root``; return them."""
    found = files(text)
    for name, content in found.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, "utf-8")
    return found


def environment(**extra: str) -> dict[str, str]:
    """The environment a reader has: this venv's ``toolctl`` first on PATH, no colour."""
    env = {
        **os.environ,
        "NO_COLOR": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        **extra,
    }
    env.pop("FORCE_COLOR", None)
    return env


def run_console(
    text: str,
    cwd: Path,
    env: dict[str, str],
    skip: tuple[str, ...] = (),
    replace: dict[str, str] | None = None,
) -> list[Step]:
    """Run every ``$ command`` of the section's console blocks in ``cwd``; stdout and stderr
    merged, as a terminal shows them. Commands starting with one of ``skip`` are left to the
    caller (a server the test starts itself); ``replace`` rewrites the commands (its port)."""
    results: list[Step] = []
    page_to_real: dict[str, str] = {}  # a run id the page shows → the id of the real run
    for shown_command, shown in steps(text):
        if shown_command.startswith(skip):
            continue
        command = RUN_ID.sub(lambda m: page_to_real.get(m.group(0), m.group(0)), shown_command)
        for old, new in (replace or {}).items():
            command = command.replace(old, new)
        if command.startswith("export "):
            name, value = exported(command, cwd, env)
            env[name] = value
            actual: list[str] = []
        else:
            actual = _bash(command, cwd, env).stdout.rstrip("\n").splitlines()
        _pair_ids(shown, actual, page_to_real)
        results.append((shown_command, shown, actual))
    return results


def _pair_ids(shown: list[str], actual: list[str], page_to_real: dict[str, str]) -> None:
    """Pair the new run ids a step shows with the ones it printed, in order of appearance."""
    new_shown = [i for i in RUN_ID.findall("\n".join(shown)) if i not in page_to_real]
    known = set(page_to_real.values())
    new_real = [i for i in RUN_ID.findall("\n".join(actual)) if i not in known]
    page_to_real.update(zip(dict.fromkeys(new_shown), dict.fromkeys(new_real), strict=False))


def assert_as_shown(results: list[Step]) -> None:
    """Each command printed what the page shows (run ids and times compared by shape)."""
    shown_ids: dict[str, str] = {}
    real_ids: dict[str, str] = {}
    for command, shown, actual in results:
        assert _timeless(normalise(actual, real_ids)) == _timeless(normalise(shown, shown_ids)), (
            command
        )


def _timeless(lines: list[str]) -> list[str]:
    return [TIMING.sub(" in <t>", line) for line in lines]


def _bash(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "-c", command],
        cwd=cwd,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        timeout=120,
        check=False,
    )
