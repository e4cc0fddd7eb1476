"""The example-registry page (docs/examples.md) shows real output."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from toolctl_examples import weather

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "docs" / "examples.md").read_text("utf-8")


def _shown_output(command: str) -> list[str]:
    """The lines the page shows after ``$ command`` in a console block."""
    lines = README.split(f"$ {command}\n", 1)[1].split("```", 1)[0]
    return lines.strip().splitlines()


def test_validate_output_is_as_shown() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "toolctl", "validate"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert (done.stdout + done.stderr).strip().splitlines() == _shown_output("toolctl validate")


@pytest.mark.timeout(30)
def test_weather_server_prints_the_environment_and_serves_it(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script = ROOT / "tests" / "examples" / "weather_server.py"
    shown = _shown_output("python tests/examples/weather_server.py --port 8765")
    with subprocess.Popen(
        [sys.executable, str(script), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    ) as proc:
        try:
            assert proc.stdout is not None
            printed = [proc.stdout.readline().strip() for _ in shown]
            assert [_any_port(line) for line in printed] == [_any_port(line) for line in shown]
            for line in printed:
                name, _, value = line.removeprefix("export ").partition("=")
                monkeypatch.setenv(name, value)
            assert weather.current_weather({"city": "Berlin"})["condition"] == "overcast"
        finally:
            proc.terminate()


def _any_port(line: str) -> str:
    return re.sub(r"127\.0\.0\.1:\d+/", "127.0.0.1:PORT/", line)
