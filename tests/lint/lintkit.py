"""Helpers for lint tests: write a small project to disk and lint it through the real loader."""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import yaml

from toolctl.diagnostics import Diagnostic
from toolctl.lint import lint
from toolctl.loader import load_registry

CLEAN = """\
toolctl: 1
name: get_weather
title: Get weather
description: Get the current weather for a city, in degrees Celsius.
inputSchema:
  type: object
  properties:
    city:
      type: string
      description: City name, e.g. Paris.
  required: [city]
  additionalProperties: false
mcp:
  annotations:
    readOnlyHint: true
inputExamples:
  - input: {city: Paris}
"""


class Project:
    """A throwaway registry: ``tools.d/`` files plus ``toolctl.yaml`` with lint settings."""

    def __init__(self, root: Path) -> None:
        self.root = root
        (root / "tools.d").mkdir()

    def write(self, text: str, name: str = "tool.yaml") -> Path:
        path = self.root / "tools.d" / name
        path.write_text(textwrap.dedent(text), encoding="utf-8")
        return path

    def lint(
        self,
        settings: dict[str, Any] | None = None,
        config: dict[str, Any] | None = None,
        **options: Any,
    ) -> list[Diagnostic]:
        """Lint the registry; ``settings`` is the ``lint:`` section, ``config`` other keys of
        toolctl.yaml (``toolsets:``)."""
        config = {"tools": "tools.d", "pythonPath": ".", "lint": settings or {}, **(config or {})}
        (self.root / "toolctl.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        from toolctl.config import project_for

        registry = load_registry(project=project_for(), packs=False)
        assert registry.ok, [d.format() for d in registry.diagnostics]
        return lint(registry, include_load=False, **options)


def found(diags: list[Diagnostic], code: str) -> list[tuple[int, int]]:
    """(line, col) of every finding with ``code``."""
    return [(d.line, d.col) for d in diags if d.code == code]
