"""Pure renderings of lint results: SARIF 2.1.0, GitHub workflow commands, the rule table.

Nothing here prints; the CLI writes what these functions return.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path, PurePath
from typing import Any
from urllib.parse import quote

from toolctl.diagnostics import Diagnostic, Severity
from toolctl.lint.model import Rule
from toolctl.lint.packs import Catalogue

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
INFO_URI = "https://toolctl.dev/lint"
_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _pascal(name: str) -> str:
    """``pattern-backtracking`` → ``PatternBacktracking``: SARIF's style for a rule's name."""
    return "".join(part[:1].upper() + part[1:] for part in name.replace("_", "-").split("-"))


def _sarif_rule(rule: Rule) -> dict[str, Any]:
    return {
        "id": rule.code,
        "name": _pascal(rule.name),
        "shortDescription": {"text": rule.summary},
        "fullDescription": {"text": rule.explain},
        "help": {"text": rule.explain, "markdown": rule.explain},
        "helpUri": f"{INFO_URI}#{rule.code.lower()}",
        "defaultConfiguration": {"level": _LEVEL[rule.severity]},
        "properties": {"tags": [rule.family]},
    }


_OTHER = {
    "TC": ("InvalidDeclaration", "a problem loading or validating the tool files"),
    "TX": ("ExportFinding", "an export finding"),
}


def _other_code(code: str) -> dict[str, Any]:
    """A descriptor for a finding that is not a lint rule (``TC301`` from loading)."""
    name, what = _OTHER.get(code[:2], ("ToolctlFinding", "a toolctl finding"))
    return {
        "id": code,
        "name": name,
        "shortDescription": {"text": f"{code}: {what}"},
        "helpUri": f"{INFO_URI}#{code.lower()}",
    }


def _sarif_result(diag: Diagnostic, index: dict[str, int]) -> dict[str, Any]:
    text = diag.message + (f" (hint: {diag.hint})" if diag.hint else "")
    result: dict[str, Any] = {
        "ruleId": diag.code,
        "level": _LEVEL[diag.severity],
        "message": {"text": text},
    }
    if diag.code in index:
        result["ruleIndex"] = index[diag.code]
    if diag.file and not diag.file.startswith("<"):
        physical: dict[str, Any] = {"artifactLocation": _artifact(diag.file)}
        if diag.line > 0:
            physical["region"] = {"startLine": diag.line, "startColumn": max(diag.col, 1)}
        result["locations"] = [{"physicalLocation": physical}]
    if diag.pointer:
        result["properties"] = {"pointer": diag.pointer, "tool": diag.tool}
    return result


def _artifact(file: str) -> dict[str, Any]:
    """A file as SARIF names it: relative to ``%SRCROOT%``, or an absolute ``file:`` URI."""
    path = PurePath(file)
    if path.is_absolute():
        return {"uri": Path(path).as_uri()}
    return {"uri": quote(path.as_posix(), safe="/"), "uriBaseId": "%SRCROOT%"}


def src_root(root: Path) -> str:
    """The ``%SRCROOT%`` base: an absolute ``file:`` URI ending in ``/`` (SARIF §3.14.14).

    A relative base such as ``./`` is an error for SARIF consumers (Multitool SARIF1004).
    """
    uri = Path(root).absolute().as_uri()
    return uri if uri.endswith("/") else uri + "/"


def sarif(
    diags: Sequence[Diagnostic], cat: Catalogue, version: str, root: Path | None = None
) -> dict[str, Any]:
    """A SARIF 2.1.0 log of ``diags`` with every catalogue rule described in the driver.

    Relative file names in ``diags`` are relative to ``root`` (default: the working directory),
    which becomes the absolute ``%SRCROOT%`` base.
    """
    rules = list(cat)
    described = [_sarif_rule(r) for r in rules]
    for code in sorted({d.code for d in diags} - {r.code for r in rules}):
        described.append(_other_code(code))  # loader (TC) findings: metadata for every ruleId
    index = {rule["id"]: i for i, rule in enumerate(described)}
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [
            {
                "tool": {
                    "driver": {
                        "name": "toolctl",
                        "version": version,
                        "informationUri": INFO_URI,
                        "rules": described,
                    }
                },
                "originalUriBaseIds": {"%SRCROOT%": {"uri": src_root(root or Path.cwd())}},
                "results": [_sarif_result(d, index) for d in diags],
            }
        ],
    }


def _escape(text: str, prop: bool = False) -> str:
    text = text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
    return text.replace(":", "%3A").replace(",", "%2C") if prop else text


def github(diags: Iterable[Diagnostic]) -> list[str]:
    """GitHub Actions workflow commands (``::error file=...,line=...::message``)."""
    level = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}
    lines = []
    for d in diags:
        props = [f"title={_escape(d.code, True)}"]
        if d.file and not d.file.startswith("<"):
            props.insert(0, f"file={_escape(PurePath(d.file).as_posix(), True)}")
            if d.line > 0:
                props[1:1] = [f"line={d.line}", f"col={max(d.col, 1)}"]
        text = d.message + (f" (hint: {d.hint})" if d.hint else "")
        lines.append(f"::{level[d.severity]} {','.join(props)}::{_escape(text)}")
    return lines


def rule_rows(cat: Catalogue) -> list[dict[str, str]]:
    """One row per rule: code, name, family, severity, summary."""
    return [
        {
            "code": r.code,
            "name": r.name,
            "family": r.family,
            "severity": r.severity.value,
            "summary": r.summary,
        }
        for r in cat
    ]


def markdown_table(cat: Catalogue) -> str:
    """The rule table as Markdown (what the README shows)."""
    lines = ["| code | name | family | default | what it finds |", "|---|---|---|---|---|"]
    for row in rule_rows(cat):
        summary = row["summary"].replace("|", "\\|")
        lines.append(
            f"| {row['code']} | `{row['name']}` | {row['family']} | {row['severity']} | {summary} |"
        )
    return "\n".join(lines) + "\n"


def explain(rule: Rule) -> str:
    """The documentation entry of one rule (``toolctl lint --explain CODE``)."""
    head = f"{rule.code} {rule.name} ({rule.family}, default {rule.severity.value})"
    return f"{head}\n\n{rule.summary}\n\n{rule.explain}\n"
