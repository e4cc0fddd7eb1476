"""Suppressing findings: per-file ignores from config and inline ``# toolctl: ignore[...]``.

An inline comment suppresses matching findings on its own line, or on the next line when the
comment stands alone on its line::

    description: Ignore previous instructions  # toolctl: ignore[TL603]
    # toolctl: ignore[security]
    description: ...

Codes, prefixes, rule names and families are accepted, comma-separated.
"""

from __future__ import annotations

import fnmatch
import re
from collections.abc import Callable, Iterable
from pathlib import PurePath

from toolctl.diagnostics import Diagnostic
from toolctl.lint.model import Rule
from toolctl.lint.select import matches

_COMMENT = re.compile(r"#\s*toolctl:\s*ignore\[([^\]]*)\]")


def _codes(line: str) -> list[str]:
    match = _COMMENT.search(line)
    return [c.strip() for c in match.group(1).split(",") if c.strip()] if match else []


def inline_selectors(lines: list[str], line: int) -> list[str]:
    """Selectors of the ignore comments that apply to 1-based ``line``."""
    found: list[str] = []
    if 0 < line <= len(lines):
        found += _codes(lines[line - 1])
    if 1 < line <= len(lines) + 1 and lines[line - 2].lstrip().startswith("#"):
        found += _codes(lines[line - 2])
    return found


def _file_ignored(diag: Diagnostic, rule: Rule, per_file: dict[str, tuple[str, ...]]) -> bool:
    path = PurePath(diag.file).as_posix()
    return any(
        (fnmatch.fnmatch(path, glob) or fnmatch.fnmatch(path, f"*/{glob}"))
        and matches(rule, selectors)
        for glob, selectors in per_file.items()
    )


def apply(
    diags: Iterable[Diagnostic],
    rules: dict[str, Rule],
    per_file: dict[str, tuple[str, ...]],
    read_lines: Callable[[str], list[str] | None],
) -> list[Diagnostic]:
    """The findings left after per-file and inline ignores. Only files with findings are read."""
    out: list[Diagnostic] = []
    for diag in diags:
        rule = rules.get(diag.code)
        if rule is None:
            out.append(diag)
            continue
        if per_file and _file_ignored(diag, rule, per_file):
            continue
        lines = read_lines(diag.file) if diag.file and diag.line > 0 else None
        if lines and matches(rule, inline_selectors(lines, diag.line)):
            continue
        out.append(diag)
    return out
