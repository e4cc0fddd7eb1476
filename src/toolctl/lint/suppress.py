"""Suppressing findings: per-file ignores from config and inline ``# toolctl: ignore[...]``.

An inline comment suppresses matching findings on its own line, or on the next line when the
comment stands alone on its line::

    description: Ignore previous instructions  # toolctl: ignore[TL603]
    # toolctl: ignore[security]
    description: ...

Codes, prefixes, rule names and families are accepted, comma-separated.
"""

from __future__ import annotations

import difflib
import fnmatch
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import PurePath

from toolctl.diagnostics import Diagnostic
from toolctl.lint.model import Rule
from toolctl.lint.select import matches, unknown

_COMMENT = re.compile(r"#\s*toolctl:\s*ignore\[([^\]]*)\]")
_DIRECTIVE = re.compile(r"#\s*toolctl:\s*([A-Za-z_-]+)")


def _codes(line: str) -> list[str]:
    match = _COMMENT.search(line)
    return [c.strip() for c in match.group(1).split(",") if c.strip()] if match else []


def inline_selectors(lines: list[str], line: int) -> list[tuple[int, list[str]]]:
    """(comment line, selectors) of the ignore comments that apply to 1-based ``line``."""
    found: list[tuple[int, list[str]]] = []
    if 0 < line <= len(lines) and _COMMENT.search(lines[line - 1]):
        found.append((line, _codes(lines[line - 1])))
    above = lines[line - 2] if 1 < line <= len(lines) + 1 else ""
    if above.lstrip().startswith("#") and _COMMENT.search(above):
        found.append((line - 1, _codes(above)))
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
    used: set[tuple[str, int]] | None = None,
) -> list[Diagnostic]:
    """The findings left after per-file and inline ignores. Only files with findings are read.

    ``used`` collects (file, line) of every inline comment that suppressed something.
    """
    out: list[Diagnostic] = []
    for diag in diags:
        rule = rules.get(diag.code)
        if rule is None:
            out.append(diag)
            continue
        if per_file and _file_ignored(diag, rule, per_file):
            continue
        lines = read_lines(diag.file) if diag.file and diag.line > 0 else None
        hits = [at for at, sel in inline_selectors(lines or [], diag.line) if matches(rule, sel)]
        if hits:
            if used is not None:
                used.update((diag.file, at) for at in hits)
            continue
        out.append(diag)
    return out


def unused(
    files: Iterable[str],
    used: set[tuple[str, int]],
    active: Sequence[Rule],
    read_lines: Callable[[str], list[str] | None],
) -> Iterator[tuple[str, int, int, str]]:
    """(file, line, col, comment) of inline ignores that suppressed nothing.

    A comment naming a rule that did not run (not selected, or another tool's code) is left
    alone: it may be needed in another configuration.
    """
    for file in files:
        for number, text in enumerate(read_lines(file) or [], start=1):
            match = _COMMENT.search(text)
            if not match or (file, number) in used:
                continue
            selectors = _codes(text)
            if selectors and all(any(matches(r, [s]) for r in active) for s in selectors):
                yield file, number, match.start() + 1, match.group(0)


def _suggest(selector: str, rules: Sequence[Rule]) -> str | None:
    names = [r.code for r in rules] + [r.name for r in rules] + sorted({r.family for r in rules})
    near = difflib.get_close_matches(selector, names, n=1, cutoff=0.75)
    near = near or difflib.get_close_matches(selector.upper(), names, n=1, cutoff=0.75)
    return f"did you mean {near[0]!r}?" if near else None


def _bad_directive(text: str) -> tuple[int, str, str] | None:
    """(col, message, hint) for a ``# toolctl:`` comment that looks meant as an ignore."""
    typo = _DIRECTIVE.search(text)
    if typo is None:
        return None
    word = typo.group(1)
    if word == "ignore":  # the codes are missing or not in brackets: ``ignore TL101``
        what = "'ignore' without [CODES] suppresses nothing"
        return typo.start() + 1, what, "write `# toolctl: ignore[CODE,...]`"
    if difflib.get_close_matches(word.lower(), ["ignore"], cutoff=0.6):
        return typo.start() + 1, f"{word!r} is not a toolctl directive", "did you mean 'ignore'?"
    return None


def unknown_selectors(
    files: Iterable[str], rules: Sequence[Rule], read_lines: Callable[[str], list[str] | None]
) -> Iterator[tuple[str, int, int, str, str | None]]:
    """(file, line, col, message, hint) for inline comments that name no rule.

    A selector matching no rule of the catalogue (``ignore[TL999]``, ``ignore[secuirty]``)
    suppresses nothing now or ever; so does a misspelt directive (``# toolctl: ingore[...]``)
    or an ignore without its bracketed codes. The hint is None when nothing is near.
    """
    for file in files:
        for number, text in enumerate(read_lines(file) or [], start=1):
            if "toolctl:" not in text:
                continue
            match = _COMMENT.search(text)
            if match is None:
                bad = _bad_directive(text)
                if bad is not None:
                    yield file, number, *bad
                continue
            for selector in unknown(_codes(text), rules):
                what = f"ignore[{selector}] names no lint rule"
                yield file, number, match.start() + 1, what, _suggest(selector, rules)
