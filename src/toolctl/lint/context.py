"""What a rule may consult besides its tool: settings, the other tools, shared caches."""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.lint.config import LintConfig
from toolctl.lint.walk import model_texts, tool_subschemas
from toolctl.yamlsrc import JsonPath

if TYPE_CHECKING:
    from toolctl.spec import ToolSpec


@dataclass
class LintContext:
    """Shared by every rule in one lint run. Rules must treat it as read-only."""

    config: LintConfig
    tools: Sequence[ToolSpec] = ()
    python_path: list[Path] = field(default_factory=list)
    _cache: dict[tuple[str, int], Any] = field(default_factory=dict, repr=False)

    @functools.cached_property
    def names(self) -> frozenset[str]:
        """Every tool name in the registry (for cross-tool rules)."""
        return frozenset(t.name for t in self.tools)

    def memo(self, kind: str, tool: ToolSpec, build: Any) -> Any:
        """``build(tool)``, computed once per ``kind`` and tool in this run (for shared work)."""
        key = (kind, id(tool))
        try:  # every rule of every tool asks: one lookup when it is there (the usual case)
            return self._cache[key]
        except KeyError:
            value = self._cache[key] = build(tool)
            return value

    def subschemas(self, tool: ToolSpec) -> list[tuple[str, JsonPath, dict[str, Any]]]:
        """Every subschema of every schema of ``tool``: one walk per tool, shared by the rules."""
        return self.memo("subschemas", tool, _walk)  # type: ignore[no-any-return]

    def texts(self, tool: ToolSpec) -> list[tuple[JsonPath, bool, str]]:
        """Every text of ``tool`` a model reads (computed once per tool, from the shared walk)."""
        return self.memo("texts", tool, self._texts)  # type: ignore[no-any-return]

    def _texts(self, tool: ToolSpec) -> list[tuple[JsonPath, bool, str]]:
        return model_texts(tool, self.subschemas(tool))


def _walk(tool: ToolSpec) -> list[tuple[str, JsonPath, dict[str, Any]]]:
    return list(tool_subschemas(tool))
