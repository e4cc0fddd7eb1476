"""The CLI's one error boundary and its process-wide load settings, without Typer.

Both ways a command runs go through here: Typer's application (:mod:`toolctl.cli.app`) and the
quick path for plain ``lint``/``export`` invocations (:mod:`toolctl.cli.quick`), so an error
prints and exits the same whichever parsed the command line.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from toolctl.cli import exitcodes

_saved: list[tuple[bool, bool]] = []


def apply_root(no_cache: bool) -> None:
    """What the root options set for the command: the load cache (off with ``--no-cache`` or
    ``TOOLCTL_NO_CACHE``) and freezing the loaded registry (it lives until the process ends).
    :func:`restore` undoes it for in-process callers."""
    from toolctl.cache import DEFAULTS

    _saved.append((DEFAULTS.cache, DEFAULTS.freeze))
    off = os.environ.get("TOOLCTL_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no")
    DEFAULTS.cache = not (no_cache or off)
    DEFAULTS.freeze = True


def restore() -> None:
    """Undo what :func:`apply_root` set (for in-process callers of ``toolctl.cli.app.run``)."""
    if _saved:
        from toolctl.cache import DEFAULTS

        DEFAULTS.cache, DEFAULTS.freeze = _saved[0]
        _saved.clear()
        from toolctl.yamlsrc import unfreeze

        unfreeze()


def guarded(command: Callable[[], Any]) -> int:
    """Run ``command`` and return its exit code: a toolctl error printed (exit 2 for usage,
    1 otherwise), an interrupt, a click error in toolctl's style, anything else as a bug."""
    from toolctl.errors import ToolctlError, UsageError

    try:
        result = command()
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
        if exc.exit_code == exitcodes.USAGE and hasattr(exc, "format_message"):  # type: ignore[attr-defined]
            sys.stderr.write(usage_error_text(exc))
            return exitcodes.USAGE
        show()
        return int(exc.exit_code)  # type: ignore[attr-defined]
    if os.environ.get("TOOLCTL_TRACEBACK"):
        raise exc
    sys.stderr.write(
        f"toolctl: internal error: {type(exc).__name__}: {exc}\n"
        "This is a bug in toolctl; rerun with TOOLCTL_TRACEBACK=1 and report it.\n"
    )
    return exitcodes.INTERNAL


def usage_error_text(exc: Any) -> str:
    """A click usage error (bad option, missing argument, bad value) in toolctl's own style:
    ``toolctl: error: ...`` with the command's usage line and where to read more."""
    message = str(exc.format_message()).strip()
    if message[:1].isupper() and message[1:2].islower():
        message = message[0].lower() + message[1:]
    ctx = getattr(exc, "ctx", None)
    command = ctx.command_path if ctx is not None else "toolctl"
    text = f"toolctl: error: {message}"
    if ctx is not None:
        usage = " ".join(ctx.command.collect_usage_pieces(ctx))
        text += f"\n  usage: {command} {usage}"
    return text + f"\n  hint: {command} --help lists every argument and option\n"
