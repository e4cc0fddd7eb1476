"""Running the catalogue over tools: selection, severities, crash isolation and suppression."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from toolctl.diagnostics import Diagnostic, Location, Severity, error, json_pointer, sorted_unique
from toolctl.errors import ConfigError
from toolctl.lint.config import PROVIDERS, LintConfig
from toolctl.lint.context import LintContext
from toolctl.lint.locate import locate
from toolctl.lint.memory import Memory
from toolctl.lint.model import Hit, Rule
from toolctl.lint.packs import Catalogue
from toolctl.lint.select import matches, specificity, unknown
from toolctl.lint.suppress import apply, unknown_selectors, unused
from toolctl.spec import ToolSpec
from toolctl.yamlsrc import gc_paused, may_hold_directive

if TYPE_CHECKING:
    from toolctl.catalog import Toolset


def check_selectors(config: LintConfig, cat: Catalogue) -> None:
    """:class:`ConfigError` for any selector in ``config`` that names no rule."""
    selectors = [*config.select, *config.ignore, *config.severity]
    for globbed in config.per_file_ignores.values():
        selectors += globbed
    bad = unknown(selectors, cat)
    if bad:
        raise ConfigError(
            f"unknown lint rule code or family: {', '.join(bad)}",
            hint="see `toolctl lint --list-rules`; families: " + ", ".join(cat.families),
        )


def effective_severity(rule: Rule, config: LintConfig) -> Severity | None:
    """The rule's severity after overrides (the most specific selector wins); None when off."""
    best, level = 0, rule.severity
    for selector, value in config.severity.items():
        rank = specificity(rule, selector)
        if rank > best:
            best, level = rank, value  # type: ignore[assignment]
    return level


def active_rules(config: LintConfig, cat: Catalogue) -> list[tuple[Rule, Severity]]:
    """The rules that run with ``config``, each with its effective severity."""
    out = []
    for rule in cat:
        if rule.family == "resolve" and not config.resolve:
            continue
        if not matches(rule, config.select) or matches(rule, config.ignore):
            continue
        level = effective_severity(rule, config)
        if level is not None:
            out.append((rule, level))
    return out


def _diagnostic(rule: Rule, level: Severity, hit: Hit) -> Diagnostic:
    tool = hit.tool
    where: Sequence[Any] | str = hit.path
    if hit.loc is not None:
        loc = hit.loc
    elif tool is not None:
        loc, where = locate(tool, hit.path, hit.key)
    else:
        loc = Location("")
    return Diagnostic.at(
        loc,
        level,
        rule.code,
        hit.message,
        hint=hit.hint,
        pointer=where if isinstance(where, str) else json_pointer(where),
        tool=tool.name if tool else None,
        extra={"rule": rule.name, "family": rule.family, **hit.extra},
    )


def _crash(rule: Rule, tool: ToolSpec | None, exc: Exception) -> Diagnostic:
    where = f" on tool {tool.name!r}" if tool else ""
    return error(
        tool.location if tool else None,
        "TL001",
        f"rule {rule.code} ({rule.name}) crashed{where}: {type(exc).__name__}: {exc}",
        hint=f"report it to the authors of {rule.check.__module__}",
        tool=tool.name if tool else None,
    )


def _run(
    rule: Rule,
    level: Severity,
    target: Any,
    ctx: LintContext,
    tool: ToolSpec | None,
    found: list[Diagnostic],
) -> None:
    try:
        for hit in rule.check(target, ctx):
            found.append(_diagnostic(rule, level, hit))
    except Exception as exc:  # one broken rule must not hide the others' findings
        found.append(_crash(rule, tool, exc))


def _findings(
    tools: Sequence[ToolSpec],
    rules: list[tuple[Rule, Severity]],
    ctx: LintContext,
    memory: Memory | None = None,
) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    per_tool = [(r.check, r, level) for r, level in rules if r.scope == "tool"]
    for tool in tools:
        if memory is not None:
            _tool_findings(tool, per_tool, ctx, memory, found)
            continue
        # _run inlined: this loop runs (tools x rules) times, half a million at 10,000 tools
        for check, rule, level in per_tool:
            try:
                for hit in check(tool, ctx):
                    found.append(_diagnostic(rule, level, hit))
            except Exception as exc:  # as in _run: one broken rule must not hide the others
                found.append(_crash(rule, tool, exc))
        ctx.next_tool()
    for rule, level in rules:
        if rule.scope == "registry":
            _run(rule, level, tools, ctx, None, found)
    return found


def _tool_findings(
    tool: ToolSpec,
    per_tool: list[tuple[Callable[..., Any], Rule, Severity]],
    ctx: LintContext,
    memory: Memory,
    found: list[Diagnostic],
) -> None:
    """The per-tool rules on ``tool``, those :mod:`~toolctl.lint.memory` remembers taken from
    it when current, in rule order either way (so that the sorted output is the same)."""
    recalled = memory.recall(tool)
    fresh: dict[str, list[Diagnostic]] | None = None if recalled is not None else {}
    for check, rule, level in per_tool:
        if recalled is not None and rule.code in recalled:
            found += recalled[rule.code]
            continue
        start = len(found)
        try:
            for hit in check(tool, ctx):
                found.append(_diagnostic(rule, level, hit))
        except Exception as exc:  # one broken rule must not hide the others
            found.append(_crash(rule, tool, exc))
            fresh = None  # a crash is of this run (a recursion limit, a memory error)
        if fresh is not None and rule.code in memory.codes:
            fresh[rule.code] = found[start:]
    ctx.next_tool()
    if fresh is not None:
        memory.keep(tool, fresh)


def _remembered_findings(
    tools: Sequence[ToolSpec],
    rules: list[tuple[Rule, Severity]],
    config: LintConfig,
    python_path: Sequence[Path],
    toolsets: Mapping[str, Toolset],
    memory: Memory | None,
) -> list[Diagnostic]:
    """Every active rule's findings, before suppressions: as remembered for the registry as a
    whole when nothing changed, else from the rules (each tool's one-tool findings recalled
    when that tool did not change)."""
    if memory is not None:
        recalled = memory.recall_all(tools, toolsets)
        if recalled is not None:
            return recalled[""]
    with gc_paused():  # rules allocate many short-lived objects and free nothing cyclic
        ctx = LintContext(config, tools, list(python_path), toolsets)
        found = _findings(tools, rules, ctx, memory)
    if memory is not None:
        if not any(d.code == "TL001" for d in found):  # a crash is of this run
            memory.keep_all(tools, toolsets, found)
        memory.flush()
    return found


def _comment_reader(
    root: Path, directive_files: Mapping[str, bool] | None = None
) -> Callable[[str], list[str] | None]:
    """Each file's lines as the ignore-comment checks read them, each file read once per run.

    A file without a ``# toolctl:`` comment (:func:`~toolctl.yamlsrc.may_hold_directive`) reads
    as no lines: no inline comment can apply to it, and the scans for unused or unknown ignores
    have nothing to look at (they read every tool file; keeping 10,000 files' lines, or reading
    them twice, was a tenth of a lint). A file ``directive_files`` (what loading saw) says has
    none is not read at all.
    """
    seen: dict[str, list[str] | None] = {}

    def read(file: str) -> list[str] | None:
        if file not in seen:
            if directive_files is not None and directive_files.get(file) is False:
                seen[file] = []
                return seen[file]
            try:
                with open(root / file, "rb") as fh:
                    data = fh.read()
                lines = data.decode("utf-8-sig").splitlines() if may_hold_directive(data) else []
                seen[file] = lines
            except (OSError, UnicodeDecodeError):
                seen[file] = None
        return seen[file]

    return read


def _stale_ignores(
    files: list[str],
    used: set[tuple[str, int]],
    active: list[Rule],
    level: Severity,
    read_lines: Callable[[str], list[str] | None],
) -> list[Diagnostic]:
    extra = {"rule": "unused-ignore", "family": "engine"}
    return [
        Diagnostic(
            level,
            "TL002",
            f"{text!r} suppresses nothing",
            file,
            line,
            col,
            hint="remove the comment",
            extra=extra,
        )
        for file, line, col, text in unused(files, used, active, read_lines)
    ]


def _unknown_ignores(
    files: list[str],
    cat: Catalogue,
    level: Severity,
    read_lines: Callable[[str], list[str] | None],
) -> list[Diagnostic]:
    extra = {"rule": "unknown-ignore", "family": "engine"}
    found = unknown_selectors(files, list(cat), read_lines)
    return [
        Diagnostic(
            level,
            "TL003",
            what,
            file,
            line,
            col,
            hint=hint or "see `toolctl lint --list-rules`",
            extra=extra,
        )
        for file, line, col, what, hint in found
    ]


def run(
    tools: Sequence[ToolSpec],
    config: LintConfig,
    cat: Catalogue,
    *,
    python_path: Sequence[Path] = (),
    root: Path | None = None,
    directive_files: Mapping[str, bool] | None = None,
    toolsets: Mapping[str, Toolset] | None = None,
) -> list[Diagnostic]:
    """Every finding of the active rules on ``tools``, suppressions applied, sorted.

    ``root`` is where relative diagnostic file names are read from for inline ignore comments
    (default: the working directory); ``directive_files`` says which of them loading saw holding
    a ``toolctl:`` directive (a file it says holds none is not read).
    """
    check_selectors(config, cat)
    rules = active_rules(config, cat)
    memory = Memory.open(rules, config)
    found = _remembered_findings(tools, rules, config, python_path, toolsets or {}, memory)
    found = [*cat.problems, *found]
    read_lines = _comment_reader((root or Path.cwd()).resolve(), directive_files)
    used: set[tuple[str, int]] = set()
    kept = apply(found, cat.rules, config.per_file_ignores, read_lines, used)
    files = {t.location.file for t in tools if t.origin.kind == "file"} | {f for f, _ in used}
    typo = next((level for rule, level in rules if rule.code == "TL003"), None)
    if typo is not None:
        kept += _unknown_ignores(sorted(files), cat, typo, read_lines)
    stale = next((level for rule, level in rules if rule.code == "TL002"), None)
    if stale is not None:
        # With fewer providers than usual, an ignore for a provider finding may just be idle.
        narrowed = set(PROVIDERS) - set(config.providers)
        active = [r for r, _ in rules if not (narrowed and r.family == "providers")]
        kept += _stale_ignores(sorted(files), used, active, stale, read_lines)
    return sorted_unique(kept)
