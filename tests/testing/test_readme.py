"""The `toolctl test` walkthrough (docs/test.md): every console block is its command's output."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "docs" / "examples" / "testing"
FIX_MARK = "<!-- readme test: the fix below is applied before this block runs -->"
TIMING = re.compile(r" in \d+\.\d+s")

pytestmark = pytest.mark.timeout(120)


def _section() -> str:
    return (ROOT / "docs" / "test.md").read_text("utf-8")


def _blocks(section: str) -> list[tuple[bool, str, str]]:
    """(apply the fix first?, command, expected output) for each console block."""
    out = []
    for match in re.finditer(r"(<!--[^\n]*-->\n)?```console\n\$ ([^\n]+)\n(.*?)```", section, re.S):
        out.append((match.group(1) == FIX_MARK + "\n", match.group(2), match.group(3)))
    return out


def _apply_fix(handler: Path) -> None:
    text = handler.read_text("utf-8")
    text = text.replace(
        '    "fahrenheit": lambda c: c * 9 / 5 + 32,\n}',
        '    "fahrenheit": lambda c: c * 9 / 5 + 32,\n    "kelvin": lambda c: c + 273.15,\n}',
    )
    text = text.replace(
        'result = FROM_CELSIUS[args["to"]](celsius)',
        'result = round(FROM_CELSIUS[args["to"]](celsius), 2)',
    )
    handler.write_text(text, "utf-8")


def test_readme_walkthrough_output_is_real(tmp_path: Path) -> None:
    work = tmp_path / "example"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("__pycache__", ".toolctl"))
    blocks = _blocks(_section())
    assert [fix for fix, _, _ in blocks] == [False, False, True]
    env = {**os.environ, "NO_COLOR": "1", "PYTHONDONTWRITEBYTECODE": "1"}
    env.pop("FORCE_COLOR", None)
    for fix, command, expected in blocks:
        if fix:
            _apply_fix(work / "temperature_demo.py")
        argv = command.split()
        assert argv[0] == "toolctl"
        done = subprocess.run(
            [sys.executable, "-m", "toolctl", *argv[1:]],
            cwd=work,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert TIMING.sub(" in 0s", done.stdout) == TIMING.sub(" in 0s", expected), command
        assert done.returncode == (0 if fix else 1)


def test_the_python_api_snippet_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    work = tmp_path / "example"
    shutil.copytree(EXAMPLE, work, ignore=shutil.ignore_patterns("__pycache__", ".toolctl"))
    _apply_fix(work / "temperature_demo.py")
    monkeypatch.chdir(work)
    section = _section()
    code = section[section.index("```python\n") + 10 :]
    code = code[: code.index("```")]
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)  # the snippet as documented
    report = namespace["report"]
    assert report.counts()["passed"] == 7  # type: ignore[attr-defined]
    assert (work / "report.xml").read_text().startswith("<?xml")
