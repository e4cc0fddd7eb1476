"""Resource limits of ``isolation: subprocess`` handlers (reliability case 48)."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

import toolctl
from toolctl.errors import ToolctlError
from toolctl.registry import Registry
from toolctl.runtime import RunStatus
from toolctl.runtime.execution.isolation.limits import ResourceLimits, limits_of

from .conftest import write_project

HOG = """\
toolctl: 1
tools:
  - name: hog_isolated
    description: Allocates 2 GiB in a child process.
    handler: rt_handlers:hog
    isolation: subprocess
    inputSchema: {type: object}
  - name: rlimits_isolated
    description: Reports the limits of its child process.
    handler: rt_handlers:rlimits
    isolation: subprocess
    timeout: 2.5
    inputSchema: {type: object}
"""

LINUX_ONLY = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="resource limits are tested on Linux"
)


def _registry(project: Path, run_section: str) -> Registry:
    write_project(project, {"hog.yaml": HOG})
    with (project / "toolctl.yaml").open("a", encoding="utf-8") as config:
        config.write(run_section)
    return toolctl.load()


@LINUX_ONLY
@pytest.mark.timeout(60)
def test_a_handler_over_its_memory_limit_fails_and_the_caller_goes_on(project: Path) -> None:
    reg = _registry(project, "run: {memoryLimitMb: 256}\n")
    result = reg.call("hog_isolated", {})
    assert result.status is RunStatus.FAILED
    assert result.error is not None and result.error.code == "handler_error"
    assert result.error.message.startswith("MemoryError: ")
    assert "memory limit of 256 MiB" in result.error.message
    # The calling process is unharmed: the next isolated call runs normally.
    assert reg.call("add_isolated", {"a": 2, "b": 3}).status is RunStatus.SUCCEEDED


@LINUX_ONLY
@pytest.mark.timeout(60)
def test_the_child_runs_under_the_default_limits(project: Path) -> None:
    reg = _registry(project, "")
    result = reg.call("rlimits_isolated", {})
    assert result.output == {"as": 1024 * 1024 * 1024, "cpu": 4}  # timeout 2.5 s → 3 + 1


def test_limits_default_to_one_gib_and_follow_the_timeout(reg: Registry) -> None:
    limits = limits_of(reg)
    assert limits == ResourceLimits(memory_mb=1024)
    assert limits.for_child(2.5) == {"memory_bytes": 1024**3, "cpu_seconds": 4}
    assert limits.for_child(None)["cpu_seconds"] is None


def test_null_turns_the_memory_limit_off(project: Path) -> None:
    reg = _registry(project, "run: {memoryLimitMb: null}\n")
    assert limits_of(reg).for_child(None) == {"memory_bytes": None, "cpu_seconds": None}


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        ("0", "must be a positive"),
        ("-5", "must be a positive"),
        ("'lots'", "must be a positive"),
        ("1.5", "must be a positive"),
        ("true", "must be a positive"),
        (str(2**63), "is more than any process can be given"),  # past RLIMIT_AS's int64
    ],
)
def test_a_bad_memory_limit_is_a_config_error_when_loading(
    project: Path, value: str, problem: str
) -> None:
    # reported where the config is read (so by `validate` too), never as a handler error
    with pytest.raises(ToolctlError, match=rf"toolctl.yaml:\d+:\d+: run.memoryLimitMb .*{problem}"):
        _registry(project, f"run: {{memoryLimitMb: {value}}}\n")


@LINUX_ONLY
@pytest.mark.timeout(60)
def test_the_cli_reports_the_memory_error_and_exits_1(
    project: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolctl.cli.app import run as cli

    _registry(project, "run: {memoryLimitMb: 256}\n")
    capsys.readouterr()
    code = cli(["run", "hog_isolated", "--input", "{}"])
    err = capsys.readouterr().err
    assert code == 1
    assert "hog_isolated failed (run " in err
    assert err.rstrip().endswith(
        "handler_error: MemoryError: the handler exceeded its memory limit of 256 MiB "
        "(run.memoryLimitMb in toolctl.yaml)"
    )
