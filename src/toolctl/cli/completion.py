"""``toolctl completion SHELL``: the shell completion script (bash, zsh or fish)."""

from __future__ import annotations

import enum
from typing import Annotated

import typer


class Shell(str, enum.Enum):
    """The shells toolctl completes in."""

    bash = "bash"
    zsh = "zsh"
    fish = "fish"


def completion(
    shell: Annotated[Shell, typer.Argument(metavar="SHELL", help="bash, zsh or fish.")],
) -> None:
    """Print the completion script for SHELL: commands, options, tool names and run ids.

    \b
    bash:  eval "$(toolctl completion bash)"    in ~/.bashrc
    zsh:   eval "$(toolctl completion zsh)"     in ~/.zshrc, after compinit
    fish:  toolctl completion fish > ~/.config/fish/completions/toolctl.fish

    Tool names come from the load cache and run ids from the run history: completing never
    imports a handler and never creates a history.
    """
    from toolctl.cli.complete import script

    typer.echo(script(shell.value))


def register(app: typer.Typer) -> None:
    """Add ``toolctl completion`` to ``app``."""
    app.command("completion")(completion)
