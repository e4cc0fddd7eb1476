"""Running the CLI in process, as a test does: the exit code and what it printed."""

from __future__ import annotations

import pytest

from toolctl.cli.app import run

Capture = pytest.CaptureFixture[str]


def toolctl(capsys: Capture, *argv: str) -> tuple[int, str, str]:
    """``toolctl ARGV...`` in this process: (exit code, stdout, stderr) of that call alone."""
    capsys.readouterr()  # what earlier steps printed is not this call's
    code = run(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
