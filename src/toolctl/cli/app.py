"""The Typer application, its one error boundary, and the list of command modules."""

from __future__ import annotations

import importlib
import inspect
import os
import sys
from typing import Annotated

import typer

from toolctl import __version__
from toolctl.cli import exitcodes

# Each module exposes ``register(app)``; keep imports in them light (no yaml/jsonschema/mcp at
# module level) so ``toolctl --help`` stays fast.
COMMAND_MODULES = [
    "toolctl.cli.validate",
    "toolctl.cli.inspect",
    "toolctl.cli.run",
    "toolctl.cli.runs",
    "toolctl.cli.export",
    "toolctl.cli.lint",
    "toolctl.cli.test",
    "toolctl.cli.serve",
]

app = typer.Typer(
    name="toolctl",
    help="A declarative registry of LLM tools: validate, lint, test, run, export and serve.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def _version(value: bool) -> None:
    if value:
        typer.echo(f"toolctl {__version__}")
        raise typer.Exit()


@app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
) -> None:
    """A declarative registry of LLM tools: validate, lint, test, run, export and serve."""


_registered = False


def reflow(doc: str) -> str:
    """A docstring as help text: each paragraph on one line, so the terminal wraps it.

    Docstrings are hard-wrapped for the source; kept as they are, the help breaks sentences
    mid-line. Lines starting with whitespace or a list marker, and click's ``\b`` paragraphs,
    keep their breaks.
    """
    paragraphs = []
    for paragraph in inspect.cleandoc(doc).split("\n\n"):
        if paragraph.startswith("\b"):
            paragraphs.append(paragraph)
            continue
        lines: list[str] = []
        for line in paragraph.split("\n"):
            if lines and not line.startswith((" ", "\t", "- ", "* ", "• ")):
                lines[-1] = f"{lines[-1]} {line.strip()}"
            else:
                lines.append(line)
        paragraphs.append("\n".join(lines))
    return "\n\n".join(paragraphs)


def _reflow_help(typer_app: typer.Typer) -> None:
    """Reflow the help of every command and group (once, at registration: a few string
    operations, so ``toolctl --help`` stays as fast)."""
    for command in typer_app.registered_commands:
        doc = command.help if command.help is not None else inspect.getdoc(command.callback)
        if doc:
            command.help = reflow(doc)
    for group in typer_app.registered_groups:
        if group.typer_instance is not None:
            _reflow_help(group.typer_instance)


def _register_all() -> None:
    global _registered
    if _registered:
        return
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(app)
    _reflow_help(app)
    _registered = True


_register_all()


def main() -> None:
    """Console-script entry point: run the app behind one error boundary."""
    sys.exit(run(sys.argv[1:]))


def run(argv: list[str]) -> int:
    """Run the CLI on ``argv`` and return the exit code (the one error boundary)."""
    from toolctl.errors import ToolctlError, UsageError

    try:
        result = app(args=argv, prog_name="toolctl", standalone_mode=False)
    except ToolctlError as exc:
        from toolctl.cli.render import print_error

        print_error(exc)
        return exitcodes.USAGE if isinstance(exc, UsageError) else exitcodes.FINDINGS
    except KeyboardInterrupt:
        sys.stderr.write("toolctl: interrupted\n")
        return exitcodes.INTERRUPTED
    except Exception as exc:
        return _other_error(exc)
    return result if isinstance(result, int) else exitcodes.OK


def _other_error(exc: Exception) -> int:
    # typer >= 0.29 vendors click, so click's exception classes are matched by shape.
    if type(exc).__name__ == "Abort":
        sys.stderr.write("toolctl: aborted\n")
        return exitcodes.INTERRUPTED
    show = getattr(exc, "show", None)
    if callable(show) and isinstance(getattr(exc, "exit_code", None), int):
        show()
        return int(exc.exit_code)  # type: ignore[attr-defined]
    if os.environ.get("TOOLCTL_TRACEBACK"):
        raise exc
    sys.stderr.write(
        f"toolctl: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in toolctl; rerun with TOOLCTL_TRACEBACK=1 and report it.\n"
    )
    return exitcodes.INTERNAL
