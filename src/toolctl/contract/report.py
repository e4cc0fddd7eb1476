"""Pure renderings of a :class:`DiffResult`: text, Markdown (a pull-request comment), JSON, and
diagnostics for the SARIF and GitHub writers that ``toolctl lint`` uses. Nothing here prints."""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from itertools import groupby
from typing import TYPE_CHECKING, Any

from toolctl.contract.changes import CODES, SEVERITY, Change, Kind
from toolctl.contract.diff import DiffResult
from toolctl.diagnostics import Diagnostic, json_pointer

if TYPE_CHECKING:
    from toolctl.lint.packs import Catalogue

LABELS = {
    Kind.BREAKING: "breaking",
    Kind.SAFETY: "safety",
    Kind.UNDECIDED: "cannot decide",
    Kind.TEXT: "model-visible text",
    Kind.COMPATIBLE: "compatible",
    Kind.OTHER: "other",
    Kind.SEMVER: "semver",
}
_ICONS = {
    Kind.BREAKING: "🔴",
    Kind.SAFETY: "🟠",
    Kind.SEMVER: "🔴",
    Kind.UNDECIDED: "🟡",
    Kind.TEXT: "🔵",
    Kind.COMPATIBLE: "🟢",
    Kind.OTHER: "⚪",
}


def summary(result: DiffResult) -> str:
    """``2 breaking, 1 model-visible text`` or ``no changes``."""
    counts = result.counts
    if not counts:
        return "no changes"
    return ", ".join(f"{n} {LABELS[Kind(k)]}" for k, n in counts.items())


def text_diff(old: Any, new: Any) -> list[str]:
    """A unified diff of two texts, without the file header lines."""
    a = "" if old is None else str(old)
    b = "" if new is None else str(new)
    lines = difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=2)
    return [line for line in lines if not line.startswith(("---", "+++"))]


def _by_tool(result: DiffResult) -> Iterator[tuple[str, list[Change]]]:
    for tool, group in groupby(result.changes, key=lambda c: c.tool):
        yield tool, list(group)


def _versions(result: DiffResult, tool: str) -> str:
    old, new = result.versions(tool)
    if old == new:
        return f" {old}" if old else ""
    return f" {old or 'unversioned'} → {new or 'unversioned'}"


def render_text(result: DiffResult) -> str:
    """The human report: one block per tool, text diffs indented under their change."""
    lines = [f"toolctl diff {result.base.label} → {result.head.label}"]
    for tool, changes in _by_tool(result):
        lines.append("")
        lines.append(f"{tool}{_versions(result, tool)}")
        for c in changes:
            loc = result.location(c)
            where = f"  ({loc})" if loc is not None and loc.file else ""
            lines.append(f"  {LABELS[c.kind]:<18} {c.code} {c.message}{where}")
            if c.kind is Kind.TEXT:
                lines.extend(f"      {d}" for d in text_diff(c.old, c.new))
    lines.append("")
    lines.append(summary(result))
    return "\n".join(lines) + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def render_markdown(result: DiffResult, fail_on: str = "breaking") -> str:
    """A pull-request comment: summary, a table per tool, text diffs folded away."""
    failing = result.failing(fail_on)
    head = "### toolctl contract diff"
    lines = [head, ""]
    if not result.changes:
        lines.append(
            f"No contract changes between `{result.base.label}` and `{result.head.label}`."
        )
        return "\n".join(lines) + "\n"
    verdict = (
        f"**{len(failing)} change(s) fail `--fail-on {fail_on}`**"
        if failing
        else ("No change fails the check")
    )
    lines.append(f"`{result.base.label}` → `{result.head.label}`: {summary(result)}. {verdict}.")
    for tool, changes in _by_tool(result):
        lines += [
            "",
            f"#### `{tool}`{_versions(result, tool)}",
            "",
            "| | class | code | change | where |",
            "|---|---|---|---|---|",
        ]
        texts = []
        for c in changes:
            loc = result.location(c)
            where = f"`{loc}`" if loc is not None and loc.file else ""
            lines.append(
                f"| {_ICONS[c.kind]} | {LABELS[c.kind]} | {c.code} | {_cell(c.message)} | {where} |"
            )
            if c.kind is Kind.TEXT:
                texts.append(c)
        for c in texts:
            body = "\n".join(text_diff(c.old, c.new)).replace("```", "` ` `")
            lines += [
                "",
                f"<details><summary>{_cell(c.message)}</summary>",
                "",
                "```diff",
                body,
                "```",
                "",
                "</details>",
            ]
    return "\n".join(lines) + "\n"


def to_json(result: DiffResult, fail_on: str = "breaking") -> dict[str, Any]:
    """The ``--format json`` document."""
    changes = []
    for c in result.changes:
        item = c.to_dict()
        loc = result.location(c)
        if loc is not None and loc.file:
            item.update(file=loc.file, line=loc.line, col=loc.col)
        changes.append(item)
    tools = sorted({c.tool for c in result.changes})
    return {
        "base": result.base.label,
        "head": result.head.label,
        "status": "fail" if result.failing(fail_on) else "ok",
        "summary": result.counts,
        "versions": {t: _pair(result.versions(t)) for t in tools},
        "changes": changes,
    }


def _pair(versions: tuple[str | None, str | None]) -> dict[str, str | None]:
    return {"old": versions[0], "new": versions[1]}


def diagnostics(result: DiffResult) -> list[Diagnostic]:
    """The changes as located diagnostics (for the SARIF and GitHub writers)."""
    out = []
    for c in result.changes:
        loc = result.location(c)
        out.append(
            Diagnostic.at(
                loc if loc is not None and loc.file else None,
                SEVERITY[c.kind],
                c.code,
                f"{c.tool}: {LABELS[c.kind]}: {c.message}",
                pointer=json_pointer(c.path),
                tool=c.tool,
            )
        )
    return out


def rules() -> Catalogue:
    """The change codes as a lint :class:`~toolctl.lint.packs.Catalogue` (for SARIF's driver)."""
    from toolctl.lint.model import Rule
    from toolctl.lint.packs import Catalogue

    return Catalogue(
        rules={
            c.code: Rule(
                c.code,
                c.name,
                "contract",
                SEVERITY[c.kind],
                c.summary,
                f"{c.summary} Class: {LABELS[c.kind]}. See docs/lock.md.",
                _no_check,
            )
            for c in CODES.values()
        }
    )


def _no_check(*_: Any) -> list[Any]:
    return []
