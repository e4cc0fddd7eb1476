"""docs/getting-started.md runs offline: the `weather` example against the local stand-in for
Open-Meteo (tests/examples/weather_server.py), every command printing what the page shows."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.pages import ROOT, assert_as_shown, environment, run_console, section
from tests.test_readme_run import steps

# slow: starts the stand-in server and toolctl processes
pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

SERVER = "python tests/examples/weather_server.py"
SHOWN_URL = "127.0.0.1:8765"


def _example_project(root: Path) -> None:
    for name in ("tools.d", "examples"):
        shutil.copytree(ROOT / name, root / name)
    shutil.copy(ROOT / "toolctl.yaml", root)


def test_the_weather_example_runs_offline_as_shown(tmp_path: Path) -> None:
    offline = section("getting-started.md", "offline")
    server_step = next(s for s in steps(offline) if s[0].startswith(SERVER))
    assert server_step[0] == f"{SERVER} --port 8765"
    _example_project(tmp_path)
    env = environment(TOOLCTL_EXAMPLES_STATE=str(tmp_path / ".examples-state"))
    # the network is not needed: a tool that reached past the stand-in would fail here
    env.pop("TOOLCTL_WEATHER_API_URL", None)
    env.pop("TOOLCTL_GEOCODING_API_URL", None)
    with subprocess.Popen(
        [sys.executable, "-u", str(ROOT / SERVER.split()[1]), "--port", "0"],
        stdout=subprocess.PIPE,
        text=True,
    ) as server:
        try:
            assert server.stdout is not None
            printed = [server.stdout.readline().rstrip("\n") for _ in server_step[1]]
            url = re.search(r"127\.0\.0\.1:\d+", printed[0])
            assert url is not None
            port_free = [line.replace(url.group(0), SHOWN_URL) for line in printed]
            assert port_free == server_step[1]  # the lines the reader copies
            results = run_console(
                offline, tmp_path, env, skip=(SERVER,), replace={SHOWN_URL: url.group(0)}
            )
        finally:
            server.terminate()
    assert [c.split()[:2] for c, _, _ in results][2:] == [
        ["toolctl", "validate"],
        ["toolctl", "run"],
        ["toolctl", "run"],
        ["toolctl", "run"],
        ["toolctl", "test"],
    ]
    assert_as_shown(results)


def test_the_shown_output_reports_units_as_people_write_them() -> None:
    offline = section("getting-started.md", "offline")
    assert "mph" in offline and "mp/h" not in offline
