"""``toolctl test``: run the tools' test cases, example checks and fuzzing; report like pytest."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from toolctl.cli import exitcodes
from toolctl.cli.options import (
    FormatOpt,
    OutputFormat,
    PacksOpt,
    RegistryOpt,
    TagsOpt,
    ToolsArg,
    ToolsOpt,
    VerboseOpt,
    split_targets,
)

if TYPE_CHECKING:
    from rich.console import Console

    from toolctl.testing import CaseResult, TestReport

_MARKS = {
    "passed": ("PASS", "green"),
    "failed": ("FAIL", "bold red"),
    "error": ("ERROR", "bold magenta"),
    "skipped": ("SKIP", "yellow"),
}


def _progress(enabled: bool) -> Any:
    """A rich progress bar on stderr (a terminal only), or None."""
    if not enabled:
        return None
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

    from toolctl.cli.render import err_console

    con = err_console()
    if not con.is_terminal:
        return None
    return Progress(
        TextColumn("[bold]testing[/]"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("{task.description}"),
        console=con,
        transient=True,
    )


def _print_problem(con: Console, result: CaseResult) -> None:
    from rich.markup import escape

    from toolctl.cli.runview import escape_controls

    def shown(text: str) -> str:
        # tool data (handler errors, outputs) never drives the terminal, as in `toolctl run`
        return escape(escape_controls(text))

    con.soft_wrap = True  # never fold lines: the YAML below must paste as printed

    label, style = _MARKS[result.outcome.value]
    con.print(
        f"[{style}]{label}[/] [bold]{shown(result.id)}[/] "
        f"[dim]({escape(str(result.case.location))})[/]"
    )
    if result.message and not result.finding:
        con.print(f"  {shown(result.message)}")
    for m in result.mismatches:
        con.print(f"  {shown(m.message)}")
        for line in m.details:
            con.print(f"    {shown(line)}")
        for line in m.diff:
            color = "red" if line.startswith("-") else "green" if line.startswith("+") else "dim"
            con.print(f"    [{color}]{shown(line)}[/]")
    if result.finding is not None:
        con.print(f"  {shown(result.finding.problem)}")
        con.print(
            f"  minimal failing input after {result.finding.shrink_calls} shrink call(s); "
            f"paste under `tests:` in {escape(result.case.location.file)}:"
        )
        for line in result.finding.yaml_case().splitlines():
            con.print(f"    {escape(line)}")
    con.print("")


def _summary(report: TestReport) -> str:
    c = report.counts()
    text = (
        f"{c['passed']} passed, {c['failed']} failed, {c['error']} error(s), "
        f"{c['skipped']} skipped in {report.duration_ms / 1000:.2f}s"
    )
    if report.seed is not None:
        text += f" (seed {report.seed})"
    return text


def render_text(report: TestReport, verbose: bool = False) -> None:
    """Failures with their diffs, then one line per tool and the totals, on stdout."""
    from rich.markup import escape

    from toolctl.cli.render import console

    con = console()
    for r in report.results:
        if r.outcome.value in ("failed", "error") or (verbose and r.outcome.value == "skipped"):
            _print_problem(con, r)
        elif verbose:
            label, style = _MARKS[r.outcome.value]
            con.print(f"[{style}]{label}[/] {escape(r.id)}")
    if not report.results:
        con.print("no test cases selected (add `tests:` or `inputExamples` to a tool)")
        return
    from toolctl.cli.verbosity import quiet

    if not quiet():  # -q: the failures and the totals only
        con.print(_table(report))
    style = "bold green" if report.ok else "bold red"
    con.print(f"[{style}]{escape(_summary(report))}[/]")


def _table(report: TestReport) -> Any:
    """One row per tool: passed, failed, errors, skipped."""
    from rich.markup import escape
    from rich.table import Table

    table = Table(box=None, pad_edge=False, show_edge=False)
    for column in ("tool", "passed", "failed", "errors", "skipped"):
        table.add_column(column, justify="left" if column == "tool" else "right")
    tools: dict[str, dict[str, int]] = {}
    for r in report.results:
        row = tools.setdefault(r.case.tool, {"passed": 0, "failed": 0, "error": 0, "skipped": 0})
        row[r.outcome.value] += 1
    for tool, row in tools.items():
        table.add_row(
            escape(tool), *(str(row[k]) for k in ("passed", "failed", "error", "skipped"))
        )
    return table


def test(
    targets: ToolsArg = None,
    registry_path: RegistryOpt = None,
    tool: ToolsOpt = None,
    tag: TagsOpt = None,
    keyword: Annotated[
        str | None,
        typer.Option("-k", metavar="TEXT", help="Only cases whose `tool::name` contains TEXT."),
    ] = None,
    fuzz: Annotated[
        int,
        typer.Option(
            "--fuzz",
            min=0,
            metavar="N",
            help="Fuzz each tool with N valid and N invalid inputs generated from its inputSchema.",
        ),
    ] = 0,
    seed: Annotated[
        int | None,
        typer.Option("--seed", metavar="INT", help="Seed for --fuzz (printed when not given)."),
    ] = None,
    timeout: Annotated[
        float | None,
        typer.Option(
            "--timeout",
            min=0.001,
            metavar="SECONDS",
            help="Per case, when neither the case nor the tool sets one.",
        ),
    ] = None,
    allow_error: Annotated[
        list[str] | None,
        typer.Option(
            "--allow-error",
            metavar="EXCEPTION",
            help="Exception type a handler raises on purpose; not a "
            "crash when fuzzing (repeatable).",
        ),
    ] = None,
    examples: Annotated[
        bool, typer.Option("--examples/--no-examples", help="Run each inputExamples entry.")
    ] = True,
    fmt: FormatOpt = OutputFormat.text,
    junit: Annotated[
        Path | None,
        typer.Option("--junit", metavar="FILE", help="Also write a JUnit XML report to FILE."),
    ] = None,
    verbose: VerboseOpt = False,
    packs: PacksOpt = True,
) -> None:
    """Run the tools' `tests:` cases, check their inputExamples, and fuzz them (--fuzz N).

    `toolctl test` tests every tool; `toolctl test NAME...` only those.

    Cases run through the same pipeline as `toolctl run`, with a temporary run history.
    Exit 0 when every case passed, 1 when any failed or could not run, 2 when the --junit
    file cannot be written.
    """
    from toolctl.cli.registries import fix_hint, load, require_tool
    from toolctl.cli.render import note, print_diagnostics, print_error, print_json
    from toolctl.cli.runview import stdout_to_stderr
    from toolctl.errors import ToolctlError, UsageError
    from toolctl.runtime.redact import guard_log_handlers
    from toolctl.testing import TestOptions, junit_xml, run_tests

    guard_log_handlers()  # a handler's own log lines are scrubbed of its secrets too

    names, paths = split_targets(targets)
    tools = [*names, *(tool or [])]
    registry = load(registry_path, paths, packs=packs)
    print_diagnostics(registry.diagnostics)
    if not registry.ok:
        print_error(
            ToolctlError(
                "the registry has errors; no case ran",
                hint=fix_hint(registry, "fix them first (toolctl validate)"),
            )
        )
        raise typer.Exit(exitcodes.FINDINGS)
    for name in tools:
        require_tool(registry, name, "test")
    project = registry.project
    assert project is not None  # loaded from a project
    options = TestOptions.from_settings(project.section("test"), project.config_file)
    options.tools, options.tags, options.keyword = tools, list(tag or []), keyword
    options.examples, options.fuzz, options.seed = examples, fuzz, seed
    if timeout is not None:
        options.timeout = timeout
    if allow_error:
        options.allow_errors = tuple(allow_error)
    bar = _progress(fmt is OutputFormat.text)
    # What handlers print goes to stderr, as for `toolctl run`: stdout is the report (JSON).
    with stdout_to_stderr():
        if bar is None:
            report = run_tests(registry, options)
        else:
            with bar:
                task = bar.add_task("", total=None)

                def advance(case_id: str, result: CaseResult | None, done: int, total: int) -> None:
                    bar.update(task, completed=done, total=total, description=case_id)

                report = run_tests(registry, options, advance)
    # The report first: a --junit path that cannot be written must not lose a long run's results.
    if fmt is OutputFormat.json:
        print_json(report.to_dict())
    else:
        render_text(report, verbose)
    if junit is not None:
        try:
            junit.write_text(junit_xml(report), encoding="utf-8")
        except OSError as exc:
            raise UsageError(
                f"cannot write the JUnit report {junit}: {exc.strerror}",
                hint="pass --junit a path in an existing, writable directory",
            ) from None
        if fmt is OutputFormat.text:
            note(f"wrote {junit}")
    raise typer.Exit(exitcodes.OK if report.ok else exitcodes.FINDINGS)


def register(app: typer.Typer) -> None:
    """Add ``toolctl test`` to ``app``."""
    app.command("test")(test)
