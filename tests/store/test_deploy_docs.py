"""The deployment example: its toolctl commands are ones the CLI accepts, and the balancer keeps
2025-11-25 sessions on one replica, as docs/deployment.md says."""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

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


def _directives(conf: str) -> list[str]:
    return [" ".join(line.split("#")[0].split()) for line in conf.splitlines() if line.strip()]


def test_the_balancer_checks_readiness_keeps_sessions_and_retries_only_what_is_safe() -> None:
    lines = _directives((DEPLOY / "haproxy.cfg").read_text())
    assert "http-check send meth GET uri /readyz" in lines
    assert "http-check disable-on-404" in lines  # a draining replica keeps its sessions
    assert "stick on req.hdr(mcp-session-id)" in lines  # 2025-11-25 sessions stay put
    assert "stick store-response res.hdr(mcp-session-id)" in lines
    (retry,) = [line for line in lines if line.startswith("retry-on")]
    # a dead replica's empty answer may follow a tool that ran: never retried
    assert set(retry.split()[1:]) == {"conn-failure", "503"}
    assert "http-request disable-l7-retry if { req.hdr(mcp-session-id) -m found }" in lines


def test_the_compose_password_never_goes_into_the_url() -> None:
    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text())
    for name in ("replica1", "worker"):
        env = compose["services"][name]["environment"]
        assert "@postgres:5432/" in env["TOOLCTL_STATE"] and ":${" not in env["TOOLCTL_STATE"]
        assert env["PGPASSWORD"] == "${POSTGRES_PASSWORD}"
        assert compose["services"][name]["restart"] == "unless-stopped"
    assert "healthcheck" in compose["services"]["worker"]


SPECIAL = "p@ss:w/rd?#%&= x"  # every character that means something in a URL


def test_a_password_with_url_characters_works_as_compose_passes_it(pg: Any, tmp_path: Path) -> None:
    """compose.yaml: the password in PGPASSWORD and a URL without one; a percent-encoded URL
    works too. Neither form shows the password in any output."""
    import os
    import urllib.parse

    import psycopg

    url = pg.create_database("special_pw")
    with psycopg.connect(pg.url, autocommit=True) as conn:
        conn.execute("DROP ROLE IF EXISTS fleetpw")
        conn.execute(f"CREATE ROLE fleetpw LOGIN PASSWORD '{SPECIAL}'")
        conn.execute('GRANT ALL ON DATABASE "special_pw" TO fleetpw')
        conn.execute('ALTER DATABASE "special_pw" OWNER TO fleetpw')
    where = url.rsplit("@", 1)[1]  # 127.0.0.1:PORT/special_pw
    encoded = urllib.parse.quote(SPECIAL, safe="")
    (tmp_path / "tools.d").mkdir()
    for state, extra in (
        (f"postgresql://fleetpw@{where}", {"PGPASSWORD": SPECIAL}),
        (f"postgresql://fleetpw:{encoded}@{where}", {}),
    ):
        env = {k: v for k, v in os.environ.items() if k != "PGPASSWORD"}
        env.update({"TOOLCTL_STATE": state, "NO_COLOR": "1", **extra})
        done = subprocess.run(
            [sys.executable, "-m", "toolctl", "runs", "list", "--format", "json"],
            cwd=tmp_path,
            env=env,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert done.returncode == 0, done.stderr
        assert SPECIAL not in done.stdout + done.stderr
        assert encoded not in done.stdout + done.stderr
