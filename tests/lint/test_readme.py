"""The lint page (docs/lint.md) is real: its example output, config, rule pack and rule table."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from toolctl.cli.app import run
from toolctl.lint import LintConfig, catalogue
from toolctl.lint.engine import run as run_rules
from toolctl.lint.packs import build
from toolctl.lint.report import markdown_table
from toolctl.loader import load_registry

README = Path(__file__).resolve().parents[2] / "docs" / "lint.md"


def _block(marker: str) -> str:
    text = README.read_text("utf-8")
    match = re.search(rf"<!-- {marker} -->\n```\w*\n(.*?)```", text, re.DOTALL)
    assert match, f"docs/lint.md has no block after <!-- {marker} -->"
    return match.group(1)


def test_rule_table_matches_the_catalogue() -> None:
    text = README.read_text("utf-8")
    table = text.split("<!-- lint-rules:start -->\n")[1].split("<!-- lint-rules:end -->")[0]
    assert table == markdown_table(catalogue()), (
        "docs/lint.md rule table is stale: regenerate it with "
        "`toolctl lint --list-rules --format markdown`"
    )


def test_example_output_is_what_lint_prints(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("NO_COLOR", "1")
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "search.yaml").write_text(_block("lint-example:tool"), "utf-8")
    command, *expected = _block("lint-example:output").splitlines()
    assert command == "$ toolctl lint"
    assert run(["lint"]) == 1
    assert capsys.readouterr().err.splitlines() == expected


def test_example_config_is_valid() -> None:
    settings = yaml.safe_load(_block("lint-example:config"))["lint"]
    config = LintConfig.from_settings(settings)
    assert config.providers == ("openai", "anthropic", "mcp")
    assert config.severity["TL104"] is None


def test_rule_pack_example_plugs_in(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    text = README.read_text("utf-8")
    source = re.search(r"```python\n(# mypack/lint.py\n.*?)```", text, re.DOTALL)
    assert source
    namespace: dict[str, object] = {}
    exec(compile(source.group(1), "mypack/lint.py", "exec"), namespace)
    cat = build()
    cat.add(namespace["RULES"], "mypack.lint:RULES")  # type: ignore[arg-type]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "t.yaml").write_text(
        "toolctl: 1\nname: t\ndescription: A tool that does one thing well.\n", "utf-8"
    )
    tools = list(load_registry("tools.d", packs=False).tools.values())
    [diag] = run_rules(tools, LintConfig(select=("acme",)), cat)
    assert (
        diag.format() == "tools.d/t.yaml:2:7: warning AC001 no team: tag (hint: add tags: "
        "[team:<name>])"
    )
