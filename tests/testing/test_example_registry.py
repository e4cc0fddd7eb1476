"""`toolctl test` over the example registry: every example tool passes its own cases.

The examples run on a copy of the project (so `write_file`'s sandbox and the customer database
land in a temporary directory) with the weather tool pointed at the recorded Open-Meteo stand-in
that the example tests ship (``tests/examples/weather_server.py``): no network.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest

from toolctl.cli.app import run
from toolctl.loader import load_registry

ROOT = Path(__file__).resolve().parents[2]
SERVER = ROOT / "tests" / "examples" / "weather_server.py"

pytestmark = [
    pytest.mark.timeout(120),
    pytest.mark.skipif(
        not (ROOT / "tools.d").is_dir() or not SERVER.is_file(),
        reason="the example registry (tools.d/, tests/examples/) is not here",
    ),
]


def _weather_server() -> Any:
    name = "_toolctl_example_weather_server"
    if name not in sys.modules:
        spec = importlib.util.spec_from_file_location(name, SERVER)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module  # its dataclasses look their module up here
        spec.loader.exec_module(module)
    return sys.modules[name]


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    """A copy of the example project as the working directory, with a local weather API."""
    work = tmp_path / "project"
    work.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", ".toolctl")
    for name in ("toolctl.yaml", "tools.d", "examples"):
        source = ROOT / name
        if source.is_dir():
            shutil.copytree(source, work / name, ignore=ignore)
        elif source.is_file():
            shutil.copy2(source, work / name)
    monkeypatch.chdir(work)
    monkeypatch.setenv("TOOLCTL_EXAMPLES_STATE", str(tmp_path / "state"))
    monkeypatch.delenv("TOOLCTL_SANDBOX", raising=False)
    with _weather_server().serve() as server:
        for key, value in server.env.items():
            monkeypatch.setenv(key, value)
        yield work


def test_every_example_tool_passes_its_cases(
    examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = run(["test", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    failed = {r["id"]: r["message"] for r in doc["results"] if r["outcome"] != "passed"}
    assert failed == {}
    assert code == 0
    registry = load_registry()
    tested = {r["tool"] for r in doc["results"] if r["kind"] == "case"}
    enabled = {spec.name for spec in registry.select()}
    assert tested == enabled, "every enabled example tool has test cases"
    assert not (examples / ".toolctl" / "state.db").exists()  # the history was a temporary one


@pytest.mark.slow  # fuzzes every example tool: seconds of CPU, kept out of the edit-test loop
def test_examples_survive_invalid_input_fuzzing(
    examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # invalid inputs never reach a handler, so this is safe for every example, even write_file
    code = run(["test", "-k", "fuzz invalid", "--fuzz", "15", "--seed", "4", "--format", "json"])
    doc = json.loads(capsys.readouterr().out)
    invalid = {r["id"]: r for r in doc["results"] if r["name"] == "fuzz invalid inputs"}
    assert invalid and all(r["outcome"] in ("passed", "skipped") for r in invalid.values()), {
        k: r["message"] for k, r in invalid.items()
    }
    assert code in (0, 1)
