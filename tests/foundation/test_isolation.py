"""Layering and safety: the core imports no CLI/MCP stack, and no command runs user code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from toolctl.loader import load_registry

from .conftest import REPO, run_toolctl, write

FORBIDDEN = ("typer", "rich", "click", "mcp")

_PROBE = """
import json, sys
import toolctl, toolctl.loader, toolctl.registry, toolctl.schema
from toolctl.loader import load_registry
registry = load_registry(sys.argv[1], packs=True)
registry.get("lookup.user").input_schema
from toolctl.schema import make_validator
make_validator({"type": "string", "pattern": "^a"}).errors(3)
roots = {name.split(".")[0] for name in sys.modules}
print(json.dumps({"ok": registry.ok, "loaded": sorted(roots & set(sys.argv[2:]))}))
"""


_EVERY_CORE_MODULE = """
import importlib, json, pkgutil, sys
names = []
def walk(package):
    for info in pkgutil.iter_modules(package.__path__, package.__name__ + "."):
        if info.name in ("toolctl.cli", "toolctl.server", "toolctl.__main__"):
            continue
        module = importlib.import_module(info.name)
        names.append(info.name)
        if info.ispkg:
            walk(module)
walk(importlib.import_module("toolctl"))
roots = {name.split(".")[0] for name in sys.modules}
print(json.dumps({"modules": len(names), "loaded": sorted(roots & set(sys.argv[1:]))}))
"""


def test_no_core_module_imports_cli_or_mcp_stack() -> None:
    """Every module outside cli/ and server/ imports without typer, rich, click or mcp."""
    result = subprocess.run(
        [sys.executable, "-c", _EVERY_CORE_MODULE, *FORBIDDEN],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    report = json.loads(result.stdout)
    assert report["modules"] >= 12
    assert report["loaded"] == []


def test_core_imports_no_cli_or_mcp_stack() -> None:
    """Importing and using the core (load, validate data) never imports typer/rich/click/mcp."""
    fixture = REPO / "tests" / "fixtures" / "tools.d" / "valid" / "full" / "tools.d"
    result = subprocess.run(
        [sys.executable, "-c", _PROBE, str(fixture), *FORBIDDEN],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    )
    assert json.loads(result.stdout) == {"ok": True, "loaded": []}


MARKER_MODULE = """
from pathlib import Path

Path(__file__).with_name("IMPORTED-" + __name__).write_text("user code ran")


def run(payload):
    return payload
"""

TOOL = """
toolctl: 1
name: spy
description: A tool whose handler module must never be imported by inspection commands.
handler: spypkg.handlers:run
toModelOutput: {call: 'spypkg.handlers:run'}
transform:
  display:
    output: {call: 'spypkg.handlers:run'}
hooks:
  onOutput: spyhook:run
inputSchema: {type: object, properties: {x: {type: string}}}
"""


@pytest.fixture
def spy_project(tmp_path: Path) -> Path:
    """A project whose every callable lives in modules that leave a marker file when imported."""
    return write(
        tmp_path,
        {
            "toolctl.yaml": "tools: tools.d\npythonPath: [lib]\n",
            "lib/spypkg/__init__.py": MARKER_MODULE,
            "lib/spypkg/handlers.py": MARKER_MODULE,
            "lib/spyhook.py": MARKER_MODULE,
            "tools.d/spy.yaml": TOOL,
        },
    )


def _markers(root: Path) -> list[str]:
    return sorted(p.name for p in root.rglob("IMPORTED-*"))


@pytest.mark.parametrize(
    "args",
    [
        ["validate"],
        ["validate", "--format", "json"],
        ["list"],
        ["list", "--format", "json"],
        ["show", "spy"],
        ["schema"],
        ["lint"],
        ["export", "openai"],
        ["export", "mcp"],
    ],
    ids=" ".join,
)
def test_inspection_commands_never_import_user_code(spy_project: Path, args: list[str]) -> None:
    result = run_toolctl(*args, cwd=spy_project)
    assert "Traceback" not in result.stderr
    assert result.returncode in ((0, 1) if args[0] == "lint" else (0,)), result.stderr
    assert _markers(spy_project) == []


def test_load_registry_never_imports_handlers(
    spy_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(spy_project)
    registry = load_registry(packs=False)
    assert registry.ok, registry.diagnostics
    assert registry.get("spy").handler == "spypkg.handlers:run"
    assert not {"spypkg", "spypkg.handlers", "spyhook"} & set(sys.modules)
    assert _markers(spy_project) == []


def test_missing_attribute_found_without_import(
    spy_project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (spy_project / "tools.d" / "spy.yaml").write_text(
        TOOL.replace("spyhook:run", "spyhook:nope"), encoding="utf-8"
    )
    monkeypatch.chdir(spy_project)
    registry = load_registry(packs=False)
    [diag] = registry.diagnostics
    assert diag.code == "TC402" and "defines no 'nope'" in diag.message
    assert _markers(spy_project) == []
