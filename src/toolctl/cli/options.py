"""The options several commands share, declared once: a flag means the same thing everywhere.

Short flags: ``-r`` --registry, ``-t`` --tool, ``-f`` --format (always the output format),
``-o`` --output, ``-v`` --verbose, ``-q`` --quiet, ``-h`` --help. A command that reads a registry
takes ``--registry/-r PATH`` and ``--packs/--no-packs``. The positional arguments of a command
that acts on tools (``run``, ``show``, ``test``, ``lint``, ``export``, ``list``, ``serve``) are
tool names (:data:`ToolsArg`); ``validate`` takes files. A positional that is a path is still
read as the registry (the old grammar), see :func:`split_targets`.
Each ``*_option`` function returns the declaration, so a command can word the help for itself.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from toolctl.cli import verbosity

# declared in choices.py (the quick path reads them without Typer); commands import them here
from toolctl.cli.choices import OutputFormat as OutputFormat
from toolctl.cli.choices import ReportFormat as ReportFormat
from toolctl.cli.choices import choices as choices
from toolctl.cli.complete import complete_tools

# declared in targets.py (typer-free, for the quick path); commands import them here
from toolctl.cli.targets import project_of as project_of
from toolctl.cli.targets import split_targets as split_targets

REGISTRY_HELP = (
    "Tool file, tools directory or project root (default: the project found from the working "
    "directory, upward)."
)


def registry_option(help: str = REGISTRY_HELP) -> Any:
    """``--registry/-r PATH``: where the registry is."""
    return typer.Option("--registry", "-r", metavar="PATH", help=help, show_default=False)


def tool_option(help: str = "Only this tool (repeatable).") -> Any:
    """``--tool/-t NAME``."""
    return typer.Option("--tool", "-t", metavar="NAME", help=help, show_default=False)


def tag_option(help: str = "Only tools with this tag (repeatable).") -> Any:
    """``--tag TAG``."""
    return typer.Option("--tag", metavar="TAG", help=help, show_default=False)


FORMAT_HELP = "text for people, json for machines."


def format_option(help: str = FORMAT_HELP, metavar: str = choices(OutputFormat)) -> Any:
    """``--format/-f``: what a command prints (its accepted values in ``metavar``)."""
    return typer.Option("--format", "-f", metavar=metavar, help=help, show_default=False)


def packs_option() -> Any:
    """``--packs/--no-packs``: include the tool packs installed as Python packages."""
    return typer.Option(
        "--packs/--no-packs",
        help="Include the installed tool packs (default: --packs).",
        show_default=False,
    )


def output_option(help: str = "Write to FILE instead of stdout.") -> Any:
    """``--output/-o FILE``."""
    return typer.Option("--output", "-o", metavar="FILE", help=help, show_default=False)


RegistryOpt = Annotated[Path | None, registry_option()]
PathAliasOpt = Annotated[
    Path | None,
    typer.Option("--path", "-p", metavar="PATH", hidden=True, help="Deprecated: --registry."),
]
"""The old ``--path/-p`` of ``show`` and ``export``: a hidden alias of ``--registry``."""


ToolsArg = Annotated[
    list[str] | None,
    typer.Argument(
        metavar="[TOOL]...",
        help="The tools to act on (default: all). A path here is read as --registry PATH, "
        "the old spelling.",
        show_default=False,
        autocompletion=complete_tools,
    ),
]
"""Positional tool names: what every command that acts on tools takes."""
PathsArg = Annotated[
    list[Path] | None,
    typer.Argument(
        metavar="PATH",
        help="Tool files, tools directories or project roots (the same as --registry).",
        show_default=False,
    ),
]
ToolsOpt = Annotated[list[str] | None, tool_option()]
TagsOpt = Annotated[list[str] | None, tag_option()]
FormatOpt = Annotated[OutputFormat, format_option()]
ReportFormatOpt = Annotated[
    ReportFormat,
    format_option(
        "text, json, markdown, sarif (code scanning) or github (workflow annotations).",
        choices(ReportFormat),
    ),
]
PacksOpt = Annotated[bool, packs_option()]
# ``--verbose/-v`` and ``--quiet/-q``: declared once, added to every command as it registers
VerboseOpt = verbosity.VerboseOpt
LockedOpt = Annotated[
    bool,
    typer.Option("--locked", help="Refuse (exit 1) a registry that differs from toolctl.lock."),
]
"""``--locked``: the registry must match ``toolctl.lock`` (``toolctl lock``)."""
VerifyKeyOpt = Annotated[
    Path | None,
    typer.Option(
        "--verify-key",
        metavar="PUB.pem",
        help="With --locked: refuse (exit 1) a lock without a valid signature by this Ed25519 "
        "public key (toolctl.lock.sig).",
    ),
]
"""``--verify-key``: the lock must be signed by this key (``toolctl lock --sign``)."""


def verify_key_usage(locked: bool, key: Path | None) -> None:
    """``--verify-key`` means nothing without ``--locked``: a usage error."""
    if key is not None and not locked:
        raise typer.BadParameter("--verify-key checks the lock: give --locked with it")


def registry_path(registry: Path | None, alias: Path | None) -> Path | None:
    """``--registry`` or its deprecated alias ``--path`` (not both)."""
    if registry is not None and alias is not None:
        raise typer.BadParameter("give --registry (or its old name --path), not both")
    return registry if registry is not None else alias


ShutdownTimeoutOpt = Annotated[
    float,
    typer.Option(
        "--shutdown-timeout",
        min=0,
        metavar="SECONDS",
        help="After SIGTERM, how long calls or runs in flight may finish before they are "
        "cancelled.",
    ),
]

StateOpt = Annotated[
    str | None,
    typer.Option(
        "--state",
        metavar="FILE|URL",
        help="Run history: an SQLite file or a postgresql:// URL (default: `state` in "
        "toolctl.yaml or TOOLCTL_STATE, else .toolctl/state.db).",
    ),
]
"""``--state FILE|URL``: the run history to use."""
