"""The "Run tools" page (docs/run.md) shows real output: every command in it runs here.

The commands run in order, in a copy of the example project, through the installed ``toolctl``.
Run ids, times and durations are compared by shape (ids by order of appearance). With
``TOOLCTL_README_UPDATE=1`` the test rewrites the section's outputs instead of comparing.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "docs" / "run.md"
START, END = "<!-- toolctl-run-demo -->", "<!-- /toolctl-run-demo -->"
RUN_ID = re.compile(r"\b[0-9a-f]{20}\b")

pytestmark = [
    pytest.mark.skipif(
        not (ROOT / "tools.d" / "write_file.yaml").exists(),
        reason="the example registry is not in this checkout",
    ),
    pytest.mark.timeout(180),
]


def steps(section: str) -> list[tuple[str, list[str]]]:
    """(command, shown output lines) for every ``$ command`` in the section's console blocks."""
    found: list[tuple[str, list[str]]] = []
    for block in re.findall(r"```console\n(.*?)```", section, re.S):
        for line in block.splitlines():
            if line.startswith("$ "):
                found.append((line[2:], []))
            elif found:
                found[-1][1].append(line)
    return found


def normalise(lines: list[str], ids: dict[str, str]) -> list[str]:
    out = []
    for line in lines:
        line = RUN_ID.sub(lambda m: ids.setdefault(m.group(0), f"<run{len(ids)}>"), line)
        line = re.sub(r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d", "<time>", line)
        line = re.sub(r"\b\d+(\.\d+)? ms\b", "<ms>", line)
        out.append(" ".join(line.split()))
    return out


Step = tuple[str, list[str], list[str]]


def run_demo(workdir: Path) -> tuple[list[Step], dict[str, str]]:
    """Run every step: (command, shown, actual) each, and README run id → real run id."""
    env = {
        **os.environ,
        "PYTHONUNBUFFERED": "1",
        "NO_COLOR": "1",
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}",
        "TOOLCTL_EXAMPLES_STATE": str(workdir / ".examples-state"),
    }
    # the page names the sandbox itself (`export TOOLCTL_SANDBOX=...`): a reader copying the
    # commands gets a working approval example, so the test must not supply one
    env.pop("TOOLCTL_SANDBOX", None)
    section = README.read_text("utf-8").split(START, 1)[1].split(END, 1)[0]
    readme_to_real: dict[str, str] = {}
    results = []
    last_code = 0
    for command, shown in steps(section):
        real_command = RUN_ID.sub(lambda m: readme_to_real.get(m.group(0), m.group(0)), command)
        if real_command == "echo $?":
            actual = [str(last_code)]
        elif real_command.startswith("export "):
            name, value = exported(real_command, workdir, env)
            env[name] = value
            actual = []
        else:
            done = subprocess.run(
                ["bash", "-c", real_command],
                cwd=workdir,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=120,
                check=False,
            )
            last_code = done.returncode
            actual = done.stdout.rstrip("\n").splitlines()
        shown_ids = [i for i in RUN_ID.findall("\n".join(shown)) if i not in readme_to_real]
        real_ids = [
            i for i in RUN_ID.findall("\n".join(actual)) if i not in readme_to_real.values()
        ]
        for readme_id, real_id in zip(
            dict.fromkeys(shown_ids), dict.fromkeys(real_ids), strict=False
        ):
            readme_to_real[readme_id] = real_id
        results.append((command, shown, actual))
    return results, readme_to_real


def exported(command: str, workdir: Path, env: dict[str, str]) -> tuple[str, str]:
    """The variable an ``export NAME=VALUE`` step sets, its value expanded as bash would."""
    name = command.removeprefix("export ").split("=", 1)[0]
    done = subprocess.run(
        ["bash", "-c", f'{command} && printf %s "${name}"'],
        cwd=workdir,
        env=env,
        capture_output=True,
        text=True,
        timeout=30,
        check=True,
    )
    return name, done.stdout


def test_run_section_shows_real_output(tmp_path: Path) -> None:
    workdir = tmp_path / "project"
    workdir.mkdir()
    for name in ("tools.d", "examples"):
        shutil.copytree(ROOT / name, workdir / name)
    shutil.copy(ROOT / "toolctl.yaml", workdir)
    results, ids = run_demo(workdir)
    if os.environ.get("TOOLCTL_README_UPDATE"):
        text = README.read_text("utf-8")
        head, rest = text.split(START, 1)
        section, tail = rest.split(END, 1)
        for command, shown, actual in results:
            old = "$ " + command + "\n" + "".join(f"{line}\n" for line in shown)
            new = "$ " + command + "\n" + "".join(f"{line}\n" for line in actual)
            section = section.replace(old, new, 1)
        section = RUN_ID.sub(lambda m: ids.get(m.group(0), m.group(0)), section)
        README.write_text(head + START + section + END + tail, "utf-8")
        return
    shown_ids: dict[str, str] = {}
    real_ids: dict[str, str] = {}
    for command, shown, actual in results:
        assert normalise(actual, real_ids) == normalise(shown, shown_ids), command
