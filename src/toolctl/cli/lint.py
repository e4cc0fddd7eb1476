"""``toolctl lint``: the rule catalogue over the registry, as text, JSON, SARIF or GitHub."""

from __future__ import annotations

from typing import Annotated

import typer

from toolctl.cli import linting
from toolctl.cli.choices import FailOn
from toolctl.cli.options import (
    PacksOpt,
    RegistryOpt,
    ReportFormat,
    ReportFormatOpt,
    ToolsArg,
    ToolsOpt,
)


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
    code = linting.run(
        targets, registry, tool, fmt, fail_on, provider, select, ignore, resolve, packs
    )
    raise typer.Exit(code)


def register(app: typer.Typer) -> None:
    """Add ``toolctl lint`` to ``app``."""
    app.command("lint")(lint)
