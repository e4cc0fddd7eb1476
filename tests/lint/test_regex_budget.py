"""The backtracking analysis of ``pattern`` is linear and bounded (issue: N=10,000 took 180 s)."""

from __future__ import annotations

import pytest

from tests.lint.lintkit import Project
from toolctl.diagnostics import Location
from toolctl.lint import lint_tools
from toolctl.lint.config import LintConfig
from toolctl.lint.regexcheck import MAX_NODES, TooComplex, backtracking_problem
from toolctl.spec import Origin, ToolSpec

CJK = [chr(c) for c in range(0x4E00, 0x4E00 + 10_000)]


def _tool(pattern: str) -> str:
    return (
        "toolctl: 1\nname: t\ndescription: d\ninputSchema:\n  type: object\n"
        f'  properties: {{a: {{type: string, maxLength: 5, pattern: "{pattern}"}}}}\n'
    )


@pytest.mark.timeout(60)  # quadratic analysis took about 180 s here
def test_ten_thousand_distinct_alternatives_are_analysed(project: Project) -> None:
    project.write(_tool("^(" + "|".join(CJK) + ")*$"))
    assert not [d for d in project.lint() if d.code == "TL203"]


@pytest.mark.timeout(60)
def test_overlap_among_many_alternatives_is_still_found() -> None:
    assert backtracking_problem("^(" + "|".join([*CJK, "x"]) + ")*$") is None
    assert backtracking_problem("^(" + "|".join([*CJK[:5000], "a", *CJK[5000:], "\\w"]) + ")*$")


@pytest.mark.parametrize(
    ("pattern", "risky"),
    [
        ("(a|a)+", True),
        ("(\\w|\\d)*", True),
        ("(\\d|5)*", True),
        ("(x|\\w)+", True),
        ("([ab]|c)*", True),
        ("(a|b)*", False),
        ("(\\d|x)*", False),
        ("(ab|cd)*", False),
    ],
)
def test_overlapping_branches_as_before(pattern: str, risky: bool) -> None:
    assert bool(backtracking_problem(pattern)) is risky


@pytest.mark.parametrize(
    ("pattern", "why"),
    [("(" * 400 + "a" + ")" * 400, "nested 400 deep"), ("a" * (MAX_NODES + 1), "atoms")],
)
def test_beyond_the_budget_raises_too_complex(pattern: str, why: str) -> None:
    with pytest.raises(TooComplex, match=why):
        backtracking_problem(pattern)


def test_too_complex_pattern_is_a_lint_finding_not_a_crash() -> None:
    """A spec built in code skips the loader's check: lint itself must not recurse out."""
    raw = {
        "toolctl": 1,
        "name": "deep",
        "description": "d",
        "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "string", "pattern": "(" * 400 + ")" * 400}},
        },
    }
    spec = ToolSpec.from_validated(
        raw, origin=Origin("file", "", "<code>"), location=Location("<code>", 1, 1)
    )
    found = lint_tools([spec], LintConfig())
    assert "TL001" not in {d.code for d in found}
    [hit] = [d for d in found if d.code == "TL203"]
    assert "too complex to analyse" in hit.message
