"""A third-party export format, as a package would ship it (used by test_formats)."""

from __future__ import annotations

from collections.abc import Sequence

from toolctl.diagnostics import Diagnostic
from toolctl.export.base import ExportOptions, ExportResult
from toolctl.spec import ToolSpec


class NamesExporter:
    """Exports just the tool names, with a prefix from its own option."""

    name = "names"
    description = "Tool names only (a sample plugin)"

    def export(self, specs: Sequence[ToolSpec], options: ExportOptions) -> ExportResult:
        prefix = options.extra.get("prefix", "")
        return ExportResult(self.name, [prefix + s.name for s in specs])

    def check(self, spec: ToolSpec, options: ExportOptions) -> list[Diagnostic]:
        return []


class CrashingExporter(NamesExporter):
    name = "crash"

    def export(self, specs: Sequence[ToolSpec], options: ExportOptions) -> ExportResult:
        raise ZeroDivisionError("plugin bug")


EXPORTER = NamesExporter()
CRASHING = CrashingExporter()
NOT_AN_EXPORTER = object()
