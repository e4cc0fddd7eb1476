"""What a rule may consult besides its tool: settings, the other tools, shared caches."""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.lint.config import LintConfig
from toolctl.lint.walk import keyword_index, model_texts, tool_subschemas
from toolctl.yamlsrc import JsonPath

if TYPE_CHECKING:
    from toolctl.catalog import Toolset
    from toolctl.spec import ToolSpec


@dataclass
class LintContext:
    """Shared by every rule in one lint run. Rules must treat it as read-only."""

    config: LintConfig
    tools: Sequence[ToolSpec] = ()
    python_path: list[Path] = field(default_factory=list)
    # The project's toolsets: which tools are deferred (not sent to a model up front)
    toolsets: Mapping[str, Toolset] = field(default_factory=dict)
    _cache: dict[tuple[str, int], Any] = field(default_factory=dict, repr=False)
    _scratch: dict[tuple[str, int], Any] = field(default_factory=dict, repr=False)

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

    def scratch(self, kind: str, tool: ToolSpec, build: Any) -> Any:
        """Like :meth:`memo`, but kept only while the engine runs the rules of one tool.

        For bulky per-tool structures (the walk, the texts, the export findings): the engine
        runs every per-tool rule on a tool before the next, so keeping them for the whole run
        only held 10,000 tools' worth of tuples to free at the end. Asked again later (by a
        registry rule), the structure is rebuilt: the same value, computed twice.
        """
        key = (kind, id(tool))
        try:
            return self._scratch[key]
        except KeyError:
            value = self._scratch[key] = build(tool)
            return value

    def next_tool(self) -> None:
        """Drop the :meth:`scratch` structures (the engine calls it between tools)."""
        self._scratch.clear()

    def subschemas(self, tool: ToolSpec) -> list[tuple[str, JsonPath, dict[str, Any]]]:
        """Every subschema of every schema of ``tool``: one walk per tool, shared by the rules."""
        return self.scratch("subschemas", tool, tool_subschemas)  # type: ignore[no-any-return]

    def having(self, tool: ToolSpec, keyword: str) -> list[tuple[str, JsonPath, dict[str, Any]]]:
        """The subschemas of ``tool`` that hold ``keyword``, in the order of :meth:`subschemas`.

        Indexed from the one shared walk: a rule about ``properties`` or ``default`` visits
        only the nodes that have one instead of every node of every schema.
        """
        index: dict[str, list[tuple[str, JsonPath, dict[str, Any]]]]
        index = self.scratch("keywords", tool, self._index)
        return index.get(keyword, [])

    def texts(self, tool: ToolSpec) -> list[tuple[JsonPath, bool, str]]:
        """Every text of ``tool`` a model reads (computed once per tool, from the shared walk)."""
        return self.scratch("texts", tool, self._texts)  # type: ignore[no-any-return]

    def _texts(self, tool: ToolSpec) -> list[tuple[JsonPath, bool, str]]:
        return model_texts(tool, self.subschemas(tool))

    def _index(self, tool: ToolSpec) -> dict[str, list[tuple[str, JsonPath, dict[str, Any]]]]:
        return keyword_index(self.subschemas(tool))
