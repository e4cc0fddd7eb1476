"""Toolsets and loading in the format and the config: what is declared, what is refused (at
file:line:col, with the fix), what ``toolctl list`` and ``toolctl export --budget`` show."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import toolctl
from tests.cli_helpers import toolctl as run_toolctl
from toolctl.catalog import loading_of

CONFIG = """\
toolsets:
  billing:
    description: Invoices and payments.
    loading: deferred
"""
TOOLS = """\
toolctl: 1
tools:
  - name: get_invoice
    description: Fetch one invoice by its id.
    toolset: billing
  - name: pay_invoice
    description: Pay an open invoice.
    toolset: billing
    loading: eager
  - name: ping
    description: Check that the service answers.
"""


def _project(root: Path, config: str = CONFIG, tools: str = TOOLS) -> Path:
    (root / "tools.d").mkdir()
    (root / "toolctl.yaml").write_text(config, encoding="utf-8")
    (root / "tools.d" / "tools.yaml").write_text(tools, encoding="utf-8")
    return root


def test_a_tool_inherits_its_toolsets_loading_unless_it_says_its_own(tmp_path: Path) -> None:
    registry = toolctl.load_project(_project(tmp_path), packs=False)
    loading = {s.name: loading_of(s, registry.toolsets) for s in registry}
    assert loading == {"get_invoice": "deferred", "pay_invoice": "eager", "ping": "eager"}
    assert registry.toolsets["billing"].description == "Invoices and payments."


def test_an_undeclared_toolset_is_an_error_at_its_line_with_the_nearest_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    typo = TOOLS.replace("toolset: billing\n  - name: pay", "toolset: biling\n  - name: pay")
    _project(tmp_path, tools=typo)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_toolctl(capsys, "validate")
    assert code == 1
    assert "tools.d/tools.yaml:5:14: error TC207 tool 'get_invoice' names toolset 'biling'" in err
    assert "did you mean 'billing'?" in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("config", "says"),
    [
        ("toolsets: [billing]\n", "toolsets must be a mapping"),
        ("toolsets:\n  billing: {loading: deferred}\n", "needs a description"),
        (
            "toolsets:\n  billing: {description: Money., loading: lazy}\n",
            "loading must be eager or deferred, not 'lazy'",
        ),
        ("toolsets:\n  billing: {description: Money., size: 3}\n", "unknown key(s) size"),
        ("toolsets:\n  'bill ing': {description: Money.}\n", "is not 1-64 letters"),
    ],
)
def test_a_bad_toolsets_setting_is_located_and_says_the_fix(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    config: str,
    says: str,
) -> None:
    _project(tmp_path, config=config, tools=TOOLS.replace("    toolset: billing\n", ""))
    monkeypatch.chdir(tmp_path)
    code, _, err = run_toolctl(capsys, "validate")
    assert code == 1, err  # as every other configuration error
    assert "toolctl.yaml:1:1:" in err and says in err and "hint:" in err
    assert "Traceback" not in err


def test_the_format_refuses_an_unknown_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path, tools=TOOLS.replace("loading: eager", "loading: lazy"))
    monkeypatch.chdir(tmp_path)
    code, _, err = run_toolctl(capsys, "validate")
    assert code == 1 and "tools.d/tools.yaml:9:14:" in err and "lazy" in err


def test_list_shows_toolset_and_loading(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path)
    monkeypatch.chdir(tmp_path)
    code, out, _ = run_toolctl(capsys, "list", "-f", "json")
    rows = {r["name"]: (r["toolset"], r["loading"]) for r in json.loads(out)}
    assert code == 0 and rows == {
        "get_invoice": ("billing", "deferred"),
        "pay_invoice": ("billing", "eager"),
        "ping": (None, "eager"),
    }
    code, out, _ = run_toolctl(capsys, "list")
    line = next(x for x in out.splitlines() if x.startswith("get_invoice"))
    assert "billing" in line and "deferred" in line and "loading" in out.splitlines()[0]


def test_export_budget_reports_up_front_sizes_and_fails_over_the_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path, config=CONFIG + "export:\n  budget: {tokens: 100000, anthropic: 20}\n")
    monkeypatch.chdir(tmp_path)
    code, out, err = run_toolctl(capsys, "export", "--budget", "-f", "json")
    rows = {r["format"]: r for r in json.loads(out)}
    assert code == 1
    assert rows["anthropic"]["tools"] == 2 and rows["anthropic"]["totalTools"] == 3
    assert rows["openai"]["tools"] == 3 and rows["openai"]["share"] == 1.0
    assert rows["anthropic"]["bytes"] < rows["anthropic"]["fullBytes"]
    assert rows["anthropic"]["tokens"] == -(-rows["anthropic"]["bytes"] // 4)
    assert "toolctl.yaml:5:1: anthropic: about" in err and "over the budget of 20" in err
    assert "openai:" not in err  # within the general budget
    code, out, err = run_toolctl(capsys, "export", "openai", "--budget")
    assert code == 0 and "openai" in out and "100000" in out, err


def test_export_budget_refuses_a_bad_budget_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    _project(tmp_path, config=CONFIG + "export:\n  budget: {tokens: lots}\n")
    monkeypatch.chdir(tmp_path)
    code, _, err = run_toolctl(capsys, "export", "--budget")
    assert code == 1 and "export.budget.tokens must be a positive whole number" in err
    assert "toolctl.yaml:5:1" in err and "Traceback" not in err


def test_a_thousand_tool_catalog_sends_at_most_15_percent_up_front(tmp_path: Path) -> None:
    from bench.bench_catalog import CHECKED, generate

    from toolctl.export.upfront import measure

    registry = toolctl.load_project(generate(tmp_path, 1000), packs=False)
    for fmt in CHECKED:  # anthropic, openai-responses, serve --search's tools/list
        row = measure(registry, fmt, infos=False)
        assert row.total == 1000 and row.tools == 30
        assert row.share <= 0.15, (fmt, row)


def test_lint_counts_only_tools_sent_up_front_against_the_registry_budget(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    lint = "lint:\n  select: [TL702]\n  budget: {registry: 70}\n"
    _project(tmp_path, config=CONFIG + lint)
    monkeypatch.chdir(tmp_path)
    code, _, err = run_toolctl(capsys, "lint")
    assert code == 0 and "TL702" not in err, err  # get_invoice is deferred: not counted
    (tmp_path / "toolctl.yaml").write_text(
        CONFIG.replace("loading: deferred", "loading: eager") + lint, encoding="utf-8"
    )
    code, _, err = run_toolctl(capsys, "lint")
    assert "TL702" in err and "sent up front" in err


def test_a_toolsets_scopes_bind_every_tool_of_it(tmp_path: Path) -> None:
    """A toolset may carry OAuth scopes for all its tools: a token without them neither sees
    nor calls any tool of the set (the server's listing and calls read the same map)."""
    from toolctl.principal import Principal
    from toolctl.server.toolset import build_toolset

    config = CONFIG + "    scopes: [billing:read]\n"
    tools = TOOLS.replace("    loading: eager\n", "    loading: eager\n    scopes: [billing:pay]\n")
    registry = toolctl.load_project(_project(tmp_path, config, tools), packs=False)
    served = build_toolset(registry)
    assert served.scopes == {
        "get_invoice": ("billing:read",),
        "pay_invoice": ("billing:pay", "billing:read"),
    }
    reader = Principal("https://idp.example", "ada", scopes=frozenset({"billing:read"}))
    nobody = Principal("https://idp.example", "bob")
    assert served.hidden_from(reader) == {"pay_invoice"}
    assert served.hidden_from(nobody) == {"get_invoice", "pay_invoice"}
    assert served.hidden_from(None) == frozenset()  # the local operator


def test_a_toolsets_scopes_must_be_scope_names(tmp_path: Path) -> None:
    from toolctl.errors import ConfigError

    config = CONFIG + "    scopes: [has space]\n"
    with pytest.raises(ConfigError, match=r"toolsets\.billing\.scopes must be a list"):
        toolctl.load_project(_project(tmp_path, config), packs=False)


def test_lint_counts_a_toolsets_scopes_as_the_tools_own(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """TL410 (a destructive tool every token may call) is not raised for a tool whose
    toolset carries scopes, and is for the same tool outside it."""
    destructive = (
        TOOLS.replace(
            "    loading: eager\n",
            "    loading: eager\n    mcp: {annotations: {destructiveHint: true}}\n",
        )
        + "    scopes: [ops:read]\n"
    )
    for name, config, flagged in (
        ("scoped", CONFIG + "    scopes: [billing:pay]\n", False),
        ("unscoped", CONFIG, True),
    ):
        (tmp_path / name).mkdir()
        _project(tmp_path / name, config, destructive)
        monkeypatch.chdir(tmp_path / name)
        _, out, err = run_toolctl(capsys, "lint")
        assert ("tools.d/tools.yaml:10:42: warning TL410" in out + err) is flagged, out + err
