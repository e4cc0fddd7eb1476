"""docs/lock.md shows real output, every change code, a CI recipe that parses and working Python."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from toolctl.cli.app import run
from toolctl.contract.changes import CODES
from toolctl.contract.report import LABELS

REPO = Path(__file__).resolve().parents[2]
DOC = (REPO / "docs" / "lock.md").read_text("utf-8")


def _blocks(lang: str) -> list[str]:
    return re.findall(rf"```{lang}\n(.*?)```", DOC, flags=re.S)


@pytest.fixture
def example(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The doc's project at its first version, locked and committed to git."""
    root = tmp_path / "shop-project"
    (root / "tools.d").mkdir(parents=True)
    (root / "shop").mkdir()
    (root / "shop" / "__init__.py").write_text("")
    (root / "shop" / "orders.py").write_text("def search(data):\n    return {'orders': []}\n")
    (root / "toolctl.yaml").write_text("tools: tools.d\n")
    (root / "tools.d" / "search_orders.yaml").write_text(_blocks("yaml")[0])
    monkeypatch.chdir(root)
    assert run(["lock"]) == 0
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "init", "-q"], cwd=root, check=True)
    subprocess.run([*git, "add", "-A"], cwd=root, check=True)
    subprocess.run([*git, "commit", "-qm", "v1"], cwd=root, check=True)
    (root / "tools.d" / "search_orders.yaml").write_text(_blocks("yaml")[1])
    return root


def test_the_example_output_is_what_diff_prints(
    example: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    capsys.readouterr()
    assert run(["diff"]) == 1
    assert capsys.readouterr().out == _blocks("text")[0]


def test_the_code_table_lists_every_code() -> None:
    rows = re.findall(r"^\| (TD\d{3}) \| `([a-z-]+)` \| ([a-z -]+) \| (.+) \|$", DOC, flags=re.M)
    assert [(c, n, k, s) for c, n, k, s in rows] == [
        (c.code, c.name, LABELS[c.kind], c.summary) for c in CODES.values()
    ]


def test_the_ci_recipe_is_a_workflow_using_real_options() -> None:
    (workflow,) = [b for b in _blocks("yaml") if b.startswith("name: tool contracts")]
    steps = yaml.safe_load(workflow)["jobs"]["contracts"]["steps"]
    script = "\n".join(str(s.get("run", "")) for s in steps)
    for command in (
        'toolctl diff "$base" --format sarif',
        "--format markdown",
        "toolctl lock --check",
    ):
        assert command in script
    uses = [s.get("uses", "") for s in steps]
    assert "github/codeql-action/upload-sarif@v3" in uses


def test_the_python_snippet_runs(example: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (snippet,) = [b for b in _blocks("python") if "check_lock" in b]
    exec(compile(snippet.replace("origin/main", "HEAD"), "lock.md", "exec"), {})
    out = capsys.readouterr().out
    assert "{'breaking': 1, 'semver': 1, 'safety': 2" in out
    assert "search_orders TD111 breaking input `query`: maxLength 200 → 100" in out
    assert out.count("### toolctl contract diff") == 1
