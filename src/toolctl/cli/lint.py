"""``toolctl lint``: the rule catalogue over the registry, as text, JSON, SARIF or GitHub."""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Annotated

import typer

from toolctl.cli import exitcodes
from toolctl.cli.options import (
    PacksOpt,
    RegistryOpt,
    ReportFormat,
    ReportFormatOpt,
    ToolsArg,
    ToolsOpt,
    split_targets,
)

if TYPE_CHECKING:
    from toolctl.diagnostics import Diagnostic


class FailOn(str, enum.Enum):
    """The lowest severity that makes ``toolctl lint`` exit 1."""

    error = "error"
    warning = "warning"
    info = "info"


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


def _list_rules(fmt: ReportFormat) -> None:
    from toolctl.cli.render import print_json
    from toolctl.lint import catalogue
    from toolctl.lint.report import markdown_table, rule_rows

    cat = catalogue()
    if fmt is ReportFormat.json:
        print_json(rule_rows(cat))
    elif fmt is ReportFormat.markdown:
        typer.echo(markdown_table(cat), nl=False)
    else:
        for row in rule_rows(cat):
            typer.echo(f"{row['code']}  {row['severity']:<7}  {row['name']:<32}  {row['summary']}")


def _explain(code: str) -> None:
    from toolctl.errors import UsageError
    from toolctl.lint import catalogue
    from toolctl.lint.report import explain

    rule = catalogue().get(code)
    if rule is None:
        raise UsageError(f"no lint rule {code!r}", hint="see `toolctl lint --list-rules`")
    from toolctl.cli.render import print_rst

    print_rst(explain(rule))


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
            typer.echo(line)
    else:
        print_diagnostics(diags)
        infos = sum(d.severity.value == "info" for d in diags)
        tail = f", {infos} info" if infos else ""
        note(summary_line(diags, checked) + tail)


def lint(
    targets: ToolsArg = None,
    registry: RegistryOpt = None,
    tool: ToolsOpt = None,
    fmt: ReportFormatOpt = ReportFormat.text,
    fail_on: Annotated[
        FailOn | None,
        typer.Option(
            "--fail-on",
            metavar="error|warning|info",
            help="Exit 1 when a finding is at least this severe (default: lint.fail-on in "
            "toolctl.yaml, else error).",
            show_default=False,
        ),
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(
            "--provider",
            metavar="NAME[,NAME...]",
            help="Providers to check, comma-separated (default: all): the names of "
            "`toolctl export --list-formats`.",
        ),
    ] = None,
    select: Annotated[
        str | None,
        typer.Option(
            "--select", metavar="CODES", help="Only these codes, prefixes or families (a,b)."
        ),
    ] = None,
    ignore: Annotated[
        str | None,
        typer.Option(
            "--ignore", metavar="CODES", help="Skip these codes, prefixes or families (a,b)."
        ),
    ] = None,
    resolve: Annotated[
        bool,
        typer.Option(
            "--resolve",
            help="Import handlers and check their signatures "
            "(runs user code: trusted registries only).",
        ),
    ] = False,
    explain: Annotated[
        str | None,
        typer.Option("--explain", metavar="CODE", help="Show the documentation of one rule."),
    ] = None,
    list_rules: Annotated[
        bool,
        typer.Option("--list-rules", help="List every rule and exit (also as --format markdown)."),
    ] = False,
    packs: PacksOpt = True,
) -> None:
    """Check whether tools are good, not just valid: descriptions, schemas, provider
    compatibility, annotations, tests, tool poisoning and token budgets.

    Prints `file:line:col: severity CODE message (hint: fix)`. Never imports user code unless
    --resolve. Exit 1 when anything at or above --fail-on is found.
    """
    listing = (ReportFormat.text, ReportFormat.json, ReportFormat.markdown)
    if (fmt is ReportFormat.markdown and not list_rules) or (list_rules and fmt not in listing):
        raise typer.BadParameter(
            "markdown is for --list-rules; --list-rules takes text, json or markdown",
            param_hint="--format",
        )
    if list_rules:
        _list_rules(fmt)
        return
    if explain:
        _explain(explain)
        return
    providers, selected, ignored = _split(provider), _split(select), _split(ignore)
    _check_options(providers, selected, ignored)
    from dataclasses import replace

    from toolctl.cli.registries import checked, load, require_tool
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
    raise typer.Exit(exitcodes.FINDINGS if failing else exitcodes.OK)


def register(app: typer.Typer) -> None:
    """Add ``toolctl lint`` to ``app``."""
    app.command("lint")(lint)
