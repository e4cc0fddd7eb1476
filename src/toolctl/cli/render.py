"""Rendering for the CLI: diagnostics, tables and JSON. Colour only on a terminal."""

from __future__ import annotations

import json
import os
import re
import sys
import textwrap
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from pathlib import Path

    from rich.console import Console
    from rich.table import Table

    from toolctl.diagnostics import Diagnostic
    from toolctl.errors import ToolctlError

_STYLES = {"error": "bold red", "warning": "yellow", "info": "cyan"}


def _is_terminal(stream: Any) -> bool:
    """True when ``stream`` is a terminal: decides layout (box lines, wrapping, width)."""
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def _use_color(stream: Any) -> bool:
    """Colour only: ``NO_COLOR`` and ``FORCE_COLOR`` override the terminal check."""
    if os.environ.get("NO_COLOR"):
        return False
    if os.environ.get("FORCE_COLOR"):
        return True
    return _is_terminal(stream)


def _color_system() -> Literal["auto", "standard"]:
    """rich's colour system: its own detection, except that ``FORCE_COLOR`` wins over a
    ``TERM`` of ``dumb``/``unknown`` (which some CI systems set while showing colour)."""
    term = os.environ.get("TERM", "").lower()
    if os.environ.get("FORCE_COLOR") and term in ("dumb", "unknown"):
        return "standard"
    return "auto"


def console(stderr: bool = False) -> Console:
    """A rich console on stdout (or stderr): colour and markup only on a terminal.

    ``NO_COLOR``/``FORCE_COLOR`` switch colour only; wrapping and width follow the stream.
    """
    from rich.console import Console

    stream = sys.stderr if stderr else sys.stdout
    color = _use_color(stream)
    tty = _is_terminal(stream)
    return Console(
        file=stream,
        no_color=not color,
        color_system=_color_system() if color else None,
        highlight=False,
        soft_wrap=not tty,
        width=None if tty else 200,
    )


def err_console() -> Console:
    """The stderr console (diagnostics, progress)."""
    return console(stderr=True)


def table(*columns: str, stderr: bool = False) -> Table:
    """A table with box lines on a terminal and plain aligned columns otherwise (pipes, CI)."""
    from rich import box
    from rich.table import Table

    tty = _is_terminal(sys.stderr if stderr else sys.stdout)
    result = Table(
        box=box.HEAVY_HEAD if tty else None,
        header_style="bold" if tty else "",
        pad_edge=tty,
        show_edge=tty,
    )
    for name in columns:
        result.add_column(name, overflow="fold")
    return result


def write_output(text: str, output: Path | None) -> None:
    """``text`` on stdout, or into the file ``output`` (``-o``); a file that cannot be written
    is a usage error (exit 2) naming it, not a traceback."""
    if output is None:
        sys.stdout.write(text)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        from toolctl.errors import UsageError

        raise UsageError(
            f"cannot write {output}: {exc.strerror or exc}",
            hint="check that the directory exists and is writable",
        ) from None


def print_json(data: Any, indent: int | None = 2) -> None:
    """Machine output on stdout: deterministic, strict JSON."""
    sys.stdout.write(json.dumps(data, indent=indent, ensure_ascii=False, allow_nan=False) + "\n")


def note(text: str) -> None:
    """A status line on stderr (``wrote FILE``, a summary, ``next: ...``); not under ``-q``."""
    from toolctl.cli.verbosity import quiet

    if not quiet():
        sys.stderr.write(text + "\n")


def print_diagnostics(diags: Iterable[Diagnostic]) -> None:
    """``file:line:col: severity CODE message`` lines on stderr (coloured on a terminal).

    Under ``-q`` only errors are printed.
    """
    from toolctl.cli.verbosity import quiet

    diags = [d for d in diags if d.severity.value == "error"] if quiet() else list(diags)
    if not diags:
        return
    if not _use_color(sys.stderr):
        sys.stderr.write("".join(d.format() + "\n" for d in diags))
        return
    from rich.markup import escape

    con = err_console()
    for d in diags:
        where = str(d.location) if d.file else "toolctl"
        style = _STYLES.get(d.severity.value, "")
        line = f"[bold]{escape(where)}[/]: [{style}]{d.severity.value}[/] [dim]{d.code}[/] "
        line += escape(d.message)
        if d.hint:
            line += f" [dim](hint: {escape(d.hint)})[/]"
        con.print(line, soft_wrap=True)  # one diagnostic, one line: never wrapped


def summary_line(diags: Iterable[Diagnostic], checked: str) -> str:
    """``N error(s), M warning(s) in ...`` or ``ok: ...``."""
    diags = list(diags)
    errors = sum(d.severity.value == "error" for d in diags)
    warnings = sum(d.severity.value == "warning" for d in diags)
    if not errors and not warnings:
        return f"ok: {checked}"
    return f"{errors} error(s), {warnings} warning(s) in {checked}"


def print_error(exc: ToolctlError) -> None:
    """A user error: its diagnostics, then the one-line message and hint, on stderr."""
    if exc.diagnostics:
        print_diagnostics(exc.diagnostics)
    text = f"toolctl: error: {exc.message}"
    if exc.hint:
        text += f"\n  hint: {exc.hint}"
    sys.stderr.write(text + "\n")


def diagnostics_json(diags: Iterable[Diagnostic], **extra: Any) -> dict[str, Any]:
    """The ``--format json`` document for a list of diagnostics."""
    items = [d.to_dict() for d in diags]
    status = "fail" if any(d["severity"] == "error" for d in items) else "ok"
    return {"status": status, **extra, "diagnostics": items}


# reStructuredText inline markup in rule docs: ``literal``, :role:`target`, `link <url>`_,
# `interpreted`, **strong**, *emphasis*
_RST_INLINE = re.compile(
    r"``(?P<lit>.+?)``|:[a-z]+:`~?(?P<role>[^`]+?)`|`(?P<link>[^`<]+?)\s*<(?P<url>[^>]+)>`_"
    r"|`(?P<ref>[^`]+?)`_?|\*\*(?P<strong>[^*]+?)\*\*|(?<![\w*])\*(?P<em>[^*\s][^*]*?)\*(?![\w*])"
)


def _plain_rst(match: re.Match[str], styled: bool) -> str:
    """One inline markup: its text (a link's with its address), rich markup when ``styled``."""
    kind = match.lastgroup or "lit"
    text = match.group(kind)
    if kind == "url":
        text = f"{match.group('link')} ({text})"
    if kind == "role" and text.startswith("toolctl."):
        text = text.rsplit(".", 1)[-1]  # :class:`toolctl.x.ToolContext` reads as ToolContext
    if not styled:
        return text
    from rich.markup import escape

    style = {"lit": "bold", "role": "bold", "strong": "bold", "em": "italic"}.get(kind, "underline")
    return f"[{style}]{escape(text)}[/]"


def print_rst(text: str) -> None:
    """Documentation written in reStructuredText, rendered for a terminal (bold literals, no
    backticks) or as plain text for a pipe, with paragraphs re-wrapped to the width."""
    from rich.markup import escape

    styled = _use_color(sys.stdout)
    blocks = []
    for block in text.strip("\n").split("\n\n"):
        verbatim = all(line.startswith((" ", "- ", "* ")) for line in block.splitlines())
        if not verbatim:
            block = " ".join(block.split())
        pieces, last = [], 0
        for match in _RST_INLINE.finditer(block):
            piece = block[last : match.start()]
            pieces += [escape(piece) if styled else piece, _plain_rst(match, styled)]
            last = match.end()
        pieces.append(escape(block[last:]) if styled else block[last:])
        rendered = "".join(pieces)
        blocks.append(rendered if styled or verbatim else textwrap.fill(rendered, 80))
    out = "\n\n".join(blocks) + "\n"
    if styled:
        con = console()
        con.print(out, end="", width=min(con.width, 100))
    else:
        sys.stdout.write(out)
