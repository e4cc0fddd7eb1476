"""Shared pieces of the run commands: loading the registry and store, rendering results."""

from __future__ import annotations

import contextlib
import enum
import json
import os
import sys
import unicodedata
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import typer

from toolctl.cli import exitcodes

if TYPE_CHECKING:
    from toolctl.runtime.result import RunResult


class Show(str, enum.Enum):
    """Which view of a result ``toolctl run`` prints."""

    model = "model"
    raw = "raw"
    display = "display"
    json = "json"


def escape_controls(text: str, keep_newlines: bool = True) -> str:
    r"""Make control, format (bidi, zero-width) and separator characters visible as ``\u{...}``.

    A terminal must never interpret escape sequences or bidi overrides from tool data, least of
    all in an approval prompt.
    """
    out = []
    for ch in text:
        if keep_newlines and ch in "\n\t":
            out.append(ch)
        elif unicodedata.category(ch) in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn"):
            out.append(f"\\u{{{ord(ch):04x}}}")
        else:
            out.append(ch)
    return "".join(out)


def _tty(stream: Any) -> bool:
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def dump(value: Any) -> str:
    """Pretty JSON for humans (strings print as themselves)."""
    if isinstance(value, str):
        return value
    return json.dumps(value, indent=2, ensure_ascii=False, allow_nan=False)


def out(text: str) -> None:
    """Print tool data on stdout, escaping control characters on a terminal."""
    sys.stdout.write((escape_controls(text) if _tty(sys.stdout) else text) + "\n")


def err(text: str) -> None:
    sys.stderr.write(escape_controls(text) + "\n")


def read_json_arg(value: str | None, what: str) -> str | None:
    """``JSON``, ``@file`` or ``-`` (stdin) → the JSON text; a usage error when unreadable or
    larger than the pipeline's argument limit (read with that bound: ``@/dev/zero`` or an
    endless stdin end with an error, not with the memory of the machine)."""
    from toolctl.runtime.jsondata import MAX_BYTES

    if value is None:
        return None
    data: bytes | str
    if value == "-":
        source = "stdin"
        stream = getattr(sys.stdin, "buffer", None)
        data = stream.read(MAX_BYTES + 1) if stream is not None else sys.stdin.read(MAX_BYTES + 1)
    elif value.startswith("@"):
        path = Path(value[1:])
        source = f"{what} file {path}"
        try:
            with path.open("rb") as file:
                data = file.read(MAX_BYTES + 1)
        except OSError as exc:
            raise typer.BadParameter(f"cannot read {what} file {path}: {exc.strerror}") from None
    else:
        return value
    if len(data) > MAX_BYTES:
        raise typer.BadParameter(
            f"{source} holds more than {MAX_BYTES} bytes, the limit for the {what} of a call"
        )
    if isinstance(data, str):
        return data
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise typer.BadParameter(f"{source} is not UTF-8 text") from None


@contextlib.contextmanager
def stdout_to_stderr() -> Iterator[None]:
    """While a tool runs, whatever it writes to stdout goes to stderr: ``print`` (Python's
    ``sys.stdout``) and file descriptor 1 itself (``os.write(1, ...)``, C extensions, child
    processes), so stdout carries only the result (``--format json`` stays parseable)."""
    sys.stdout.flush()
    try:
        saved = os.dup(1)
    except OSError:  # no file descriptor 1 at all
        saved = None
    if saved is not None:
        os.dup2(2, 1)
    try:
        with contextlib.redirect_stdout(sys.stderr):
            yield
    finally:
        sys.stderr.flush()
        if saved is not None:
            os.dup2(saved, 1)
            os.close(saved)


def show_traceback(text: str | None) -> None:
    """A failed handler's traceback on stderr (controls escaped); nothing when there is none."""
    if text:
        err("handler traceback:\n" + text.rstrip())


def exit_code(result: RunResult) -> int:
    from toolctl.runtime.result import RunStatus

    if result.status in (RunStatus.AWAITING_APPROVAL, RunStatus.SUSPENDED):
        return exitcodes.PENDING
    if result.status in (RunStatus.SUCCEEDED, RunStatus.RUNNING):
        return exitcodes.OK
    return exitcodes.FINDINGS


def _same(value: Any) -> Any:
    return value


def render(result: RunResult, show: Show) -> int:
    """Print ``result`` as asked; return the exit code."""
    from toolctl.runtime.result import RunStatus

    code = exit_code(result)
    # The terminal's one way out: what is printed never holds a secret value the run saw (the
    # raw output included: its sensitive fields print as [REDACTED]; the Python API has them).
    shown = result.scrub if result.secrets else _same
    if show is Show.json:
        from toolctl.cli.render import print_json

        print_json(shown(result.to_dict()))
        return code
    for note in result.notes:
        err(f"note: {note}")
    status = result.status
    if status is RunStatus.AWAITING_APPROVAL:
        out(result.run_id)
        err(f"{result.tool}: approval required; run {result.run_id} is waiting.")
        if "approval" in result.display:
            err("  " + dump(result.display["approval"]).replace("\n", "\n  "))
        err(
            f"  approve: toolctl approve {result.run_id}\n"
            f"  decline: toolctl decline {result.run_id} [--reason TEXT]"
        )
        return code
    if status is RunStatus.SUSPENDED:
        if result.error is not None:  # resume data rejected; the run stays suspended
            err(f"toolctl: error: {result.error.text()}")
        out(result.run_id)
        err(f"{result.tool}: suspended; run {result.run_id} is waiting.")
        if "suspend" in result.display:
            err("  " + dump(result.display["suspend"]).replace("\n", "\n  "))
        err(f"  resume: toolctl resume {result.run_id} --data JSON")
        return code
    if status is RunStatus.RUNNING:
        out(result.run_id)
        err(
            f"{result.tool}: running in the background as {result.run_id}.\n"
            f"  wait:   toolctl runs wait {result.run_id}"
        )
        return code
    if result.error is not None:
        err(
            f"toolctl: {result.tool} {status.value} (run {result.run_id}): {result.error.code}: "
            + result.error.text()
        )
        return code
    if show is Show.raw:
        out(dump(shown(result.output)))
    elif show is Show.display:
        out(dump(result.display.get("output")))
    else:
        model = result.model_output or {}
        out(dump(model.get("value")))
    return code
