"""Running the CLI as a test does: in process (the exit code and what it printed), or in a
fresh process that reports which modules it imported."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolctl.cli.app import run

Capture = pytest.CaptureFixture[str]


def toolctl(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    """``toolctl ARGV...`` in this process: (exit code, stdout, stderr) of that call alone."""
    capsys.readouterr()  # what earlier steps printed is not this call's
    code = run(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


_IMPORT_PROBE = """
import atexit, json, os, sys
watch = json.loads(os.environ["PROBE_WATCH"])
out = os.environ["PROBE_OUT"]
atexit.register(lambda: open(out, "w").write(json.dumps([m for m in watch if m in sys.modules])))
sys.argv = ["toolctl", *sys.argv[1:]]
from toolctl.cli import main
main()
"""


def imported_by(
    argv: list[str], cwd: Path, watch: list[str], env: dict[str, str] | None = None
) -> tuple[str, list[str]]:
    """Run ``toolctl ARGV`` in a fresh process in ``cwd``: its standard output, and which of
    the modules ``watch`` it had imported when it exited (fails the test if it fails)."""
    import json
    import os
    import subprocess
    import sys

    out = cwd / ".imported.json"
    probe_env = {**os.environ, **(env or {}), "PROBE_WATCH": json.dumps(watch)}
    probe_env["PROBE_OUT"] = str(out)
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_PROBE, *argv],
        cwd=cwd, env=probe_env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout, json.loads(out.read_text())
