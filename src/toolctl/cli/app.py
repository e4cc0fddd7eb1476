"""The Typer application, its one error boundary, and the list of command modules."""

from __future__ import annotations

import gc
import importlib
import inspect
import os
import sys
from typing import Annotated

import typer

from toolctl import __version__
from toolctl.cli.boundary import apply_root, guarded, restore
from toolctl.cli.complete import COMPLETE_VAR
from toolctl.cli.startup import long_lived
from toolctl.cli.verbosity import wrap_commands

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
    "toolctl.cli.init",
    "toolctl.cli.new",
    "toolctl.cli.worker",
    "toolctl.cli.lock",
    "toolctl.cli.diff",
    "toolctl.cli.imports",
    "toolctl.cli.completion",
    "toolctl.cli.search",
]
# The module of each command, so that `toolctl validate` registers (and Typer builds) only the
# command it runs. A command missing here still works: everything is registered for it.
COMMAND_OF = {
    "validate": "toolctl.cli.validate",
    "schema": "toolctl.cli.validate",
    "list": "toolctl.cli.inspect",
    "show": "toolctl.cli.inspect",
    "run": "toolctl.cli.run",
    "approve": "toolctl.cli.run",
    "decline": "toolctl.cli.run",
    "resume": "toolctl.cli.run",
    "runs": "toolctl.cli.runs",
    "export": "toolctl.cli.export",
    "lint": "toolctl.cli.lint",
    "test": "toolctl.cli.test",
    "serve": "toolctl.cli.serve",
    "init": "toolctl.cli.init",
    "new": "toolctl.cli.new",
    "worker": "toolctl.cli.worker",
    "lock": "toolctl.cli.lock",
    "diff": "toolctl.cli.diff",
    "import": "toolctl.cli.imports",
    "completion": "toolctl.cli.completion",
    "search": "toolctl.cli.search",
}
ROOT_FLAGS = ("--no-cache",)  # root options that take no value (skipped to find the command)

_app = typer.Typer(
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


@_app.callback()
def _root(
    version: Annotated[
        bool,
        typer.Option(
            "--version", callback=_version, is_eager=True, help="Show the version and exit."
        ),
    ] = False,
    no_cache: Annotated[
        bool,
        typer.Option(
            "--no-cache",
            help="Load every tool file afresh: neither read nor write the load cache.",
        ),
    ] = False,
) -> None:
    """A declarative registry of LLM tools: validate, lint, test, run, export and serve."""
    apply_root(no_cache)  # run() restores it


_registered: list[str] = []


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


def _register(modules: list[str]) -> None:
    """Register ``modules`` (and those registered before), always in COMMAND_MODULES order."""
    wanted = [m for m in COMMAND_MODULES if m in modules or m in _registered]
    if wanted == _registered:
        return
    _app.registered_commands.clear()
    _app.registered_groups.clear()
    for name in wanted:
        importlib.import_module(name).register(_app)
    _reflow_help(_app)
    wrap_commands(_app)  # -v/-q on every command
    _registered[:] = wanted


def _register_all() -> None:
    _register(COMMAND_MODULES)


def _modules_for(argv: list[str]) -> list[str]:
    """The command modules ``argv`` needs: its command's, none for ``--version``, else all."""
    for arg in argv:
        if arg in ROOT_FLAGS:
            continue
        if arg == "--version":
            return []
        module = None if arg.startswith("-") else COMMAND_OF.get(arg)
        return [module] if module else COMMAND_MODULES
    return COMMAND_MODULES


def __getattr__(name: str) -> typer.Typer:
    if name == "app":  # the whole application, for whoever imports it (tests, docs tools)
        _register_all()
        return _app
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main() -> None:
    """Console-script entry point: run the app behind one error boundary.

    Only the invoked command's module is registered (and built by Typer): a start-up cost that
    every `toolctl validate` in a hook or loop would pay for the other commands.
    """
    argv = sys.argv[1:]
    which = argv
    if not argv and os.environ.get(COMPLETE_VAR):  # a shell asking: its words name the command
        from toolctl.cli.complete import typed_words

        which = typed_words()
    with long_lived():  # registering builds long-lived objects only
        _register(_modules_for(which))
    code = _run(argv)
    # The process ends here: the final collection would walk every object still alive (all
    # of Typer, a loaded registry) only for the OS to free them anyway.
    gc.freeze()
    sys.exit(code)


def run(argv: list[str]) -> int:
    """Run the CLI on ``argv`` and return the exit code (the one error boundary).

    For in-process callers (tests, tools): process-wide load settings are restored after. A
    plain ``lint`` or ``export`` takes the quick path, as from the console script.
    """
    from toolctl.cli import quick

    try:
        code = quick.run(argv)
        if code is not None:
            return code
        _register_all()
        return _run(argv)
    finally:
        restore()


def _run(argv: list[str]) -> int:
    from toolctl.cli import fastparams

    fastparams.install()
    if os.environ.get(COMPLETE_VAR):  # a shell asking for candidates (toolctl completion)
        from toolctl.cli.complete import enable

        enable()
    return guarded(lambda: _app(args=argv, prog_name="toolctl", standalone_mode=False))
