"""Fixtures for the example handlers: the handler path, a fake Open-Meteo, private state."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from . import weather_server

ROOT = Path(__file__).resolve().parents[2]
# toolctl.yaml puts examples/ on the handler path; the tests import handlers the same way.
if str(ROOT / "examples") not in sys.path:
    sys.path.insert(0, str(ROOT / "examples"))


@pytest.fixture
def fake_weather(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """A running fake Open-Meteo with the weather tool's environment pointing at it."""
    with weather_server.serve() as server:
        for name, value in server.env.items():
            monkeypatch.setenv(name, value)
        yield server


@pytest.fixture(autouse=True)
def _private_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each test builds the customer database in its own temporary state directory."""
    monkeypatch.setenv("TOOLCTL_EXAMPLES_STATE", str(tmp_path / "state"))
    monkeypatch.delenv("TOOLCTL_SANDBOX", raising=False)
