"""Imports point downward inside the runtime too: each sub-package imports only what is below it,
and nothing in the runtime imports a front end (the CLI, the server, the background worker).

Read from the source (every ``import``, lazy and ``TYPE_CHECKING`` ones included), so a rule
holds for every code path, not only the ones a test happens to run."""

from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
RT = "toolctl.runtime"
FRONT_ENDS = ("toolctl.cli", "toolctl.server", "toolctl.worker")

# package -> what it must never import
RULES = {
    RT: FRONT_ENDS,
    f"{RT}.history": (f"{RT}.pipeline", f"{RT}.execution", f"{RT}.api", f"{RT}.pending"),
    f"{RT}.execution": (f"{RT}.pipeline", f"{RT}.api", f"{RT}.pending"),
    f"{RT}.pipeline": (f"{RT}.api", f"{RT}.pending"),
}


def _module_name(path: Path) -> str:
    parts = path.relative_to(SRC).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


@cache
def _imports() -> dict[str, set[str]]:
    """Every toolctl module and the toolctl modules (or names in them) it imports."""
    found: dict[str, set[str]] = {}
    for path in (SRC / "toolctl").rglob("*.py"):
        name = _module_name(path)
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                targets.update(a.name for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.update(f"{node.module}.{a.name}" for a in node.names)
        found[name] = {t for t in targets if t.startswith("toolctl")}
    return found


def _within(name: str, package: str) -> bool:
    return name == package or name.startswith(package + ".")


@pytest.mark.parametrize("package", sorted(RULES))
def test_a_package_never_imports_what_is_above_it(package: str) -> None:
    bad = sorted(
        f"{module} imports {target}"
        for module, targets in _imports().items()
        if _within(module, package)
        for target in targets
        for banned in RULES[package]
        if _within(target, banned)
    )
    assert bad == []


def test_the_sub_packages_exist_and_the_worker_is_a_front_end() -> None:
    modules = _imports()
    for package in (*RULES, "toolctl.worker"):
        assert package in modules, f"{package} is missing: update RULES with the layout"
    # the spawning side names the local worker by its module path only, never imports it
    assert not any(_within(t, "toolctl.worker") for t in modules[f"{RT}.execution.background"])
