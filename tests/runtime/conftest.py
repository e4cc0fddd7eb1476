"""Fixtures: a registry project in a temporary directory, built from tests/runtime/fixtures."""

from __future__ import annotations

import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

import toolctl
from toolctl.registry import Registry

FIXTURES = Path(__file__).parent / "fixtures"


def write_project(root: Path, extra: dict[str, str] | None = None) -> Path:
    """A project at ``root``: toolctl.yaml, the fixture tools and ``extra`` tool files."""
    shutil.copytree(FIXTURES / "tools.d", root / "tools.d", dirs_exist_ok=True)
    for name, text in (extra or {}).items():
        (root / "tools.d" / name).write_text(text, encoding="utf-8")
    (root / "toolctl.yaml").write_text(
        f"tools: tools.d\npythonPath: ['{FIXTURES}']\n", encoding="utf-8"
    )
    return root


def running(pid: int) -> bool:
    """Whether ``pid`` is a live process (Linux /proc; a zombie has ended, only its reaping is
    due)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            state = fh.read().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")


@pytest.fixture
def events() -> Iterator[list[tuple[str, object]]]:
    import rt_handlers  # importable once a registry with the fixture path has loaded

    rt_handlers.EVENTS.clear()
    rt_handlers.CALLS.clear()
    yield rt_handlers.EVENTS


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = write_project(tmp_path / "proj")
    monkeypatch.chdir(root)
    monkeypatch.syspath_prepend(str(FIXTURES))
    return root


@pytest.fixture
def reg(project: Path) -> Registry:
    return toolctl.load()


@pytest.fixture
def make_registry(project: Path) -> Callable[[dict[str, str]], Registry]:
    def make(extra: dict[str, str]) -> Registry:
        write_project(project, extra)
        return toolctl.load()

    return make


@pytest.fixture
def spawned(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, str]]:
    """The background runs handed off (run id, hand-off token), their workers not started:
    left for the test to run (``runtime.pipeline.handoff``)."""
    from toolctl.runtime.execution import background

    queued: list[tuple[str, str]] = []

    def spawn(store: object, run_id: str, token: str, registry: object, **kw: object) -> int:
        queued.append((run_id, token))
        return 0

    monkeypatch.setattr(background, "spawn", spawn)
    return queued
