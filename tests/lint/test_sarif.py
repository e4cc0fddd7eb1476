"""``toolctl lint --format sarif``: valid for the OASIS schema, the Multitool's rules and itself."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.foundation.conftest import run_toolctl
from tests.lint.sarifcheck import (
    multitool_problems,
    schema_problems,
)

BAD_TOOL = """\
toolctl: 1
name: get.weather
description: Get the current weather for a city.
inputSchema:
  type: object
  properties: {city: {type: string, pattern: "^(a+)+$"}}
"""


def lint_log(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    """A SARIF log from a project whose tool and file names need care (spaces, an absolute one),
    written to ``tmp_path/lint.sarif``; the log and the project."""
    project = tmp_path / "my project"
    (project / "tools.d" / "sub dir").mkdir(parents=True)
    (project / "tools.d" / "sub dir" / "weather 100%.yaml").write_text(BAD_TOOL)
    (project / "tools.d" / "broken.yaml").write_text("toolctl: 1\nname: x\n")
    result = run_toolctl("lint", "--format", "sarif", cwd=project)
    assert result.returncode == 1, result.stderr
    path = tmp_path / "lint.sarif"
    path.write_text(result.stdout)
    return json.loads(result.stdout), project


@pytest.fixture
def log(tmp_path: Path) -> tuple[dict[str, Any], Path]:
    return lint_log(tmp_path)


def test_src_root_is_an_absolute_file_uri(log: tuple[dict[str, Any], Path]) -> None:
    data, project = log
    [run] = data["runs"]
    assert run["originalUriBaseIds"] == {"%SRCROOT%": {"uri": project.as_uri() + "/"}}
    uris = {
        loc["physicalLocation"]["artifactLocation"]["uri"]
        for result in run["results"]
        for loc in result.get("locations", [])
    }
    assert uris == {"tools.d/sub%20dir/weather%20100%25.yaml", "tools.d/broken.yaml"}


def test_log_passes_the_oasis_schema(log: tuple[dict[str, Any], Path]) -> None:
    assert schema_problems(log[0]) == []


def test_log_passes_the_multitool_rules(log: tuple[dict[str, Any], Path]) -> None:
    assert multitool_problems(log[0]) == []


def test_the_checks_catch_what_the_multitool_catches(log: tuple[dict[str, Any], Path]) -> None:
    data = json.loads(json.dumps(log[0]))
    run = data["runs"][0]
    run["originalUriBaseIds"]["%SRCROOT%"]["uri"] = "./"  # what toolctl used to write
    run["results"][0]["ruleIndex"] = 0
    run["tool"]["driver"]["rules"][1]["name"] = "plugin-failed"
    problems = " ".join(multitool_problems(data))
    for rule in ("SARIF1004", "SARIF1010", "SARIF2012"):
        assert rule in problems


# The real Multitool validates this log with every log `diff` writes, in one start:
# tests/contract/test_cli.py::test_the_sarif_multitool_accepts_every_kind_of_log.
