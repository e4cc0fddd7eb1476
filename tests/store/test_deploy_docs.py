"""The deployment example: its toolctl commands are ones the CLI accepts, and the balancer keeps
2025-11-25 sessions on one replica, as docs/deployment.md says."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path

import yaml

DEPLOY = Path(__file__).resolve().parents[2] / "docs" / "deploy"


def test_compose_commands_are_accepted_by_the_cli() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    commands = [
        shlex.split(service["command"])
        for service in compose["services"].values()
        if str(service.get("command", "")).startswith("toolctl")
    ]
    assert {c[1] for c in commands} == {"serve", "worker"}
    for argv in commands:
        help_text = subprocess.run(
            [sys.executable, "-m", "toolctl", argv[1], "--help"],
            capture_output=True,
            text=True,
            check=True,
            env={"COLUMNS": "200", "NO_COLOR": "1", "PATH": "/usr/bin:/bin"},
        ).stdout
        for option in (a for a in argv if a.startswith("--")):
            assert re.search(rf"{re.escape(option)}\b", help_text), (argv[1], option)
    for name in ("replica1", "worker"):
        env = compose["services"][name]["environment"]
        assert env["TOOLCTL_STATE"].startswith("postgresql://")


def test_the_balancer_routes_a_session_to_one_replica() -> None:
    conf = (DEPLOY / "nginx.conf").read_text()
    assert "$http_mcp_session_id" in conf and "hash $toolctl_affinity" in conf
    assert "http_503" in conf  # a draining replica's 503 is retried elsewhere
