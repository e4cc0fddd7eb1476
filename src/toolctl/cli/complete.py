"""Shell completion: tool names and run ids, and the scripts ``toolctl completion SHELL`` prints.

Candidates come from the load cache (tool names; no handler is imported, as for ``toolctl
list``) and from the run history (run ids, only when it exists: completing never creates
one). Completion must never print an error into the user's prompt, so every failure here
completes nothing.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

SHELLS = ("bash", "zsh", "fish")
COMPLETE_VAR = "_TOOLCTL_COMPLETE"
_MAX_RUNS = 50  # the most recent runs offered: enough to find one, short enough to read
_MAX_HELP = 60  # characters of a title shown beside a tool name


def _registry_arg(ctx: Any) -> Path | None:
    """The ``--registry`` (or its old alias ``--path``) already on the command line."""
    for key in ("registry", "registry_path", "path"):
        value = ctx.params.get(key)
        if isinstance(value, (str, Path)):
            return Path(value)
    return None


def _help_text(text: str | None) -> str | None:
    """A title as completion help: one line, no control characters (a tools.d file must not
    drive the user's terminal through the prompt), at most 60 characters."""
    if not text:
        return None
    shown = "".join(c if c.isprintable() else " " for c in text)
    shown = " ".join(shown.split())
    return shown if len(shown) <= _MAX_HELP else shown[: _MAX_HELP - 1] + "…"


def tool_names(ctx: Any, incomplete: str) -> list[Any]:
    """The registry's tool names that start with ``incomplete`` (with their titles)."""
    from typer._click.shell_completion import CompletionItem

    try:
        from toolctl.cli.options import project_of
        from toolctl.loader import load_registry

        project = project_of(_registry_arg(ctx))
        packs = ctx.params.get("packs")
        registry = load_registry(project=project, packs=packs is not False, cache=True)
    except Exception:  # completing must never fail loudly: nothing to offer
        return []
    return [
        CompletionItem(spec.name, help=_help_text(spec.title))
        for spec in registry
        if spec.name.startswith(incomplete)
    ]


def run_ids(ctx: Any, incomplete: str, status: str | None = None) -> list[Any]:
    """The most recent run ids that start with ``incomplete`` (``status`` runs only)."""
    from typer._click.shell_completion import CompletionItem

    try:
        from toolctl.cli.registries import state_store

        store = state_store(_registry_arg(ctx), ctx.params.get("state"), create=False)
        if store is None:
            return []
        # not closed: open_store shares one store per history within a process
        records = store.query(status=status, limit=_MAX_RUNS)
    except Exception:  # no history, a locked or damaged one: nothing to offer
        return []
    return [
        CompletionItem(r.run_id, help=_help_text(f"{r.tool} {r.status}"))
        for r in records
        if r.run_id.startswith(incomplete)
    ]


def _pairs(items: list[Any]) -> list[tuple[str, str]]:
    return [(item.value, item.help or "") for item in items]


def complete_tools(ctx: Any, args: list[str], incomplete: str) -> list[tuple[str, str]]:
    """``autocompletion`` of a TOOL argument."""
    return _pairs(tool_names(ctx, incomplete))


def complete_run_ids(ctx: Any, args: list[str], incomplete: str) -> list[tuple[str, str]]:
    """``autocompletion`` of a RUN_ID argument: any recent run."""
    return _pairs(run_ids(ctx, incomplete))


def complete_pending(ctx: Any, args: list[str], incomplete: str) -> list[tuple[str, str]]:
    """``autocompletion`` of approve/decline: runs awaiting approval."""
    return _pairs(run_ids(ctx, incomplete, "awaiting_approval"))


def complete_suspended(ctx: Any, args: list[str], incomplete: str) -> list[tuple[str, str]]:
    """``autocompletion`` of resume: suspended runs."""
    return _pairs(run_ids(ctx, incomplete, "suspended"))


def typed_words() -> list[str]:
    """The words a shell's completion request has complete so far (after ``toolctl``; the
    word being typed left out): enough to tell which command's module to register."""
    import os
    import shlex

    try:
        if "COMP_WORDS" in os.environ:  # bash
            words = shlex.split(os.environ["COMP_WORDS"])
            return words[1 : int(os.environ.get("COMP_CWORD", len(words)))]
        line = os.environ.get("_TYPER_COMPLETE_ARGS", "")  # zsh, fish
        words = shlex.split(line)[1:]
        return words if line.endswith(" ") else words[:-1]
    except ValueError:  # an open quote: register every command
        return []


def enable() -> None:
    """Register Typer's completion classes (bash/zsh/fish): the app is built without Typer's
    --install-completion option, which would otherwise do it.

    Click's spelling of the request (``bash_complete``, ``zsh_source``) is accepted beside
    Typer's (``complete_bash``, ``source_zsh``), which the scripts use.
    """
    import os

    from typer._completion_classes import completion_init

    completion_init()
    shell, _, action = os.environ.get(COMPLETE_VAR, "").partition("_")
    if shell in SHELLS and action in ("complete", "source"):
        os.environ[COMPLETE_VAR] = f"{action}_{shell}"


def script(shell: str) -> str:
    """The completion script ``toolctl completion SHELL`` prints."""
    from typer._completion_shared import get_completion_script

    return get_completion_script(prog_name="toolctl", complete_var=COMPLETE_VAR, shell=shell)
