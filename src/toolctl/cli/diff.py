"""``toolctl diff``: classify every contract change between two registries."""

from __future__ import annotations

import enum
from typing import Annotated

import typer

from toolctl.cli import exitcodes
from toolctl.cli.options import PacksOpt, RegistryOpt, ReportFormat, ReportFormatOpt


class DiffFailOn(str, enum.Enum):
    """Which changes make ``toolctl diff`` exit 1 (a missing version bump always does)."""

    breaking = "breaking"
    safety = "safety"
    any = "any"


def diff_command(
    base: Annotated[
        str | None,
        typer.Argument(
            metavar="BASE", help="Lock file, directory or git ref (default: toolctl.lock)."
        ),
    ] = None,
    head: Annotated[
        str | None,
        typer.Argument(
            metavar="HEAD",
            help="Lock file, directory or git ref (default: the working tree).",
        ),
    ] = None,
    registry: RegistryOpt = None,
    packs: PacksOpt = True,
    fmt: ReportFormatOpt = ReportFormat.text,
    fail_on: Annotated[
        DiffFailOn,
        typer.Option(
            "--fail-on",
            metavar="breaking|safety|any",
            help="Exit 1 on breaking (and cannot-decide) changes, on those and safety "
            "changes, or on any change.",
        ),
    ] = DiffFailOn.breaking,
) -> None:
    """Classify every change between two versions of the registry's tool contracts.

    Each side is a lock file, a directory or a git ref (read with git, never checked out; no
    user code runs). Changes are breaking, safety (needs re-approval), cannot decide,
    model-visible text (with a text diff and the tool-poisoning rules run on the new text),
    compatible or other. With `version:` on tools, a breaking change without a major bump or a
    compatible one without a minor bump is an error.
    """
    from toolctl import __version__
    from toolctl.cli.options import project_of
    from toolctl.cli.registries import load
    from toolctl.cli.render import print_json
    from toolctl.contract import diff, lock_path, registry_side, resolve
    from toolctl.contract.report import (
        diagnostics,
        render_markdown,
        render_text,
        rules,
        to_json,
    )
    from toolctl.contract.sides import lock_side
    from toolctl.errors import DeclarationError
    from toolctl.lint.report import github, sarif

    project = project_of(registry)
    try:
        old = resolve(base, project, packs=packs) if base else lock_side(lock_path(project))
        new = (
            resolve(head, project, packs=packs)
            if head
            else registry_side(load(registry, packs=packs), "working tree")
        )
    except DeclarationError as exc:
        # A code-scanning upload or a workflow reads the report, not stderr: a side that does
        # not load is reported there too (its errors), then the error boundary says the rest.
        if fmt is ReportFormat.sarif:
            print_json(sarif(exc.diagnostics, rules(), __version__))
        elif fmt is ReportFormat.github:
            for line in github(exc.diagnostics):
                typer.echo(line)
        raise
    result = diff(old, new)
    policy = fail_on.value
    if fmt is ReportFormat.json:
        print_json(to_json(result, policy))
    elif fmt is ReportFormat.markdown:
        typer.echo(render_markdown(result, policy), nl=False)
    elif fmt is ReportFormat.sarif:
        print_json(sarif(diagnostics(result), rules(), __version__))
    elif fmt is ReportFormat.github:
        for line in github(diagnostics(result)):
            typer.echo(line)
    else:
        typer.echo(render_text(result), nl=False)
    raise typer.Exit(exitcodes.FINDINGS if result.failing(policy) else exitcodes.OK)


def register(app: typer.Typer) -> None:
    """Add ``toolctl diff`` to ``app``."""
    app.command("diff")(diff_command)
