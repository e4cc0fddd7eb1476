"""The work of ``toolctl validate`` once its options are parsed, without Typer: the Typer
command (:mod:`toolctl.cli.validate`) and the quick path (:mod:`toolctl.cli.quick`) both call
:func:`run`."""

from __future__ import annotations

from pathlib import Path

from toolctl.cli import exitcodes
from toolctl.cli.choices import OutputFormat


def run(
    paths: list[Path] | None = None,
    registry: Path | None = None,
    fmt: OutputFormat = OutputFormat.text,
    packs: bool = True,
) -> int:
    """Load the registry ``registry`` and ``paths`` name, print every diagnostic (text or JSON)
    and the summary line; the exit code (1 when anything is wrong)."""
    from toolctl.cli.registries import checked, load
    from toolctl.cli.render import (
        diagnostics_json,
        note,
        print_diagnostics,
        print_json,
        summary_line,
    )

    loaded = load(registry, paths, packs=packs)
    if fmt is OutputFormat.json:
        print_json(diagnostics_json(loaded.diagnostics, tools=sorted(loaded.tools)))
    else:
        print_diagnostics(loaded.diagnostics)
        note(summary_line(loaded.diagnostics, checked(loaded)))
    return exitcodes.OK if loaded.ok else exitcodes.FINDINGS
