"""The work of ``toolctl lint`` once its options are parsed, without Typer: the Typer command
(:mod:`toolctl.cli.lint`) and the quick path (:mod:`toolctl.cli.quick`) both call :func:`run`."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from toolctl.cli import exitcodes
from toolctl.cli.choices import FailOn, ReportFormat

if TYPE_CHECKING:
    from toolctl.diagnostics import Diagnostic


def _split(value: str | None) -> list[str] | None:
    return None if value is None else [v.strip() for v in value.split(",") if v.strip()]


def _check_options(
    providers: list[str] | None, select: list[str] | None, ignore: list[str] | None
) -> None:
    """A provider or rule the options name that does not exist is a usage error (exit 2).

    The same checks run on ``lint:`` in toolctl.yaml, where a mistake is a config error (exit 1).
    """
    from toolctl.errors import ConfigError, UsageError
    from toolctl.lint import LintConfig, catalogue
    from toolctl.lint.config import parse_providers
    from toolctl.lint.engine import check_selectors

    try:
        if providers is not None:
            parse_providers(providers)  # its message names --provider
    except ConfigError as exc:
        raise UsageError(exc.message, hint=exc.hint) from None
    for option, selectors in (("--select", select), ("--ignore", ignore)):
        try:
            check_selectors(LintConfig(select=tuple(selectors or ())), catalogue())
        except ConfigError as exc:
            raise UsageError(f"{option}: {exc.message}", hint=exc.hint) from None


def _render(diags: list[Diagnostic], fmt: ReportFormat, checked: str) -> None:
    from toolctl import __version__
    from toolctl.cli.render import (
        diagnostics_json,
        note,
        print_diagnostics,
        print_json,
        summary_line,
    )
    from toolctl.lint import catalogue
    from toolctl.lint.report import github, sarif

    if fmt is ReportFormat.json:
        print_json(diagnostics_json(diags))
    elif fmt is ReportFormat.sarif:
        print_json(sarif(diags, catalogue(), __version__))
    elif fmt is ReportFormat.github:
        for line in github(diags):
            sys.stdout.write(f"{line}\n")
    else:
        print_diagnostics(diags)
        infos = sum(d.severity.value == "info" for d in diags)
        tail = f", {infos} info" if infos else ""
        note(summary_line(diags, checked) + tail)


def run(
    targets: list[str] | None = None,
    registry: Path | None = None,
    tool: list[str] | None = None,
    fmt: ReportFormat = ReportFormat.text,
    fail_on: FailOn | None = None,
    provider: str | None = None,
    select: str | None = None,
    ignore: str | None = None,
    resolve: bool = False,
    packs: bool = True,
) -> int:
    """Lint the registry the options name, print the findings in ``fmt``; the exit code."""
    providers, selected, ignored = _split(provider), _split(select), _split(ignore)
    _check_options(providers, selected, ignored)
    from dataclasses import replace

    from toolctl.cli.registries import checked, load, require_tool
    from toolctl.cli.targets import split_targets
    from toolctl.diagnostics import Severity
    from toolctl.lint import config_for
    from toolctl.lint import lint as run_lint

    names, paths = split_targets(targets)
    names += tool or []
    loaded = load(registry, paths, packs=packs)
    for name in names:
        require_tool(loaded, name, "be linted", enabled=False)
    config = config_for(loaded)
    if fail_on is not None:
        config = replace(config, fail_on=Severity(fail_on.value))
    diags = run_lint(
        loaded,
        config=config,
        providers=providers,
        select=selected,
        ignore=ignored,
        resolve=resolve or None,
    )
    if names:  # findings about the named tools (and about no tool in particular)
        diags = [d for d in diags if d.tool is None or d.tool in names]
    _render(diags, fmt, checked(loaded))
    failing = any(d.severity.rank >= config.fail_on.rank for d in diags)
    return exitcodes.FINDINGS if failing else exitcodes.OK
