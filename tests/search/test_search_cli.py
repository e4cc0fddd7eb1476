"""``toolctl search``: output shapes, batch mode, and clear errors for bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli_helpers import Capture, toolctl
from toolctl.search import embed


def test_json_shape(search_project: Path, capsys: Capture) -> None:
    code, out, _ = toolctl(capsys, "search", "weather forecast for Paris", "-f", "json", "-k", "2")
    assert code == 0
    data = json.loads(out)
    assert list(data) == ["query", "results"]
    assert data["query"] == "weather forecast for Paris"
    assert 1 <= len(data["results"]) <= 2
    assert data["results"][0]["name"] == "get_current_weather"
    for row in data["results"]:
        assert list(row) == ["name", "score"]
        assert isinstance(row["score"], float) and 0 < row["score"] <= 1


def test_abstaining_gives_empty_results(search_project: Path, capsys: Capture) -> None:
    code, out, err = toolctl(capsys, "search", "hello, how are you?", "-f", "json")
    assert code == 0
    assert json.loads(out) == {"query": "hello, how are you?", "results": []}
    code, out, err = toolctl(capsys, "search", "hello, how are you?")
    assert code == 0 and out == ""
    assert "no tool fits 'hello, how are you?'" in err


def test_text_table(search_project: Path, capsys: Capture) -> None:
    code, out, _ = toolctl(capsys, "search", "send an email message", "-k", "1")
    assert code == 0
    lines = out.splitlines()
    assert lines[0].split() == ["name", "score"]
    assert lines[1].split()[0] == "sendEmail" and len(lines) == 2


def test_batch_one_line_per_query_in_order(
    search_project: Path, capsys: Capture, tmp_path: Path
) -> None:
    queries = ["read a file from disk", "good morning!", "convert euros into dollars"]
    path = tmp_path / "q.jsonl"
    path.write_text(
        "\n".join(json.dumps({"query": q}) for q in queries[:2]) + "\n\n"
        + json.dumps({"query": queries[2], "extra": 1}) + "\n",
        encoding="utf-8",
    )  # fmt: skip
    code, out, _ = toolctl(capsys, "search", "--queries", str(path), "-f", "json")
    assert code == 0
    rows = [json.loads(line) for line in out.splitlines()]
    assert [r["query"] for r in rows] == queries
    assert rows[0]["results"][0]["name"] == "read_file"
    assert rows[1]["results"] == []
    assert rows[2]["results"][0]["name"] == "convert_currency"


@pytest.mark.parametrize(
    ("content", "where", "what"),
    [
        ('{"query": "ok"}\n{"query": "bad"\n', ":2:", "invalid JSON"),
        ('{"query": "ok"}\n\n["a list"]\n', ":3:1:", "not a JSON object"),
        ('{"query": 42}\n', ":1:1:", 'no "query" string'),
        ('{"q": "typo"}\n', ":1:1:", 'no "query" string'),
        ('{"query": "  "}\n', ":1:1:", "the query is empty"),
        (b'{"query": "caf\xe9"}\n', ":1:15:", "not UTF-8"),
        ("[" * 100000 + "\n", ":1:", "invalid JSON"),
    ],
)
def test_bad_queries_file_names_file_line_col(
    search_project: Path,
    capsys: Capture,
    tmp_path: Path,
    content: str | bytes,
    where: str,
    what: str,
) -> None:
    path = tmp_path / "q.jsonl"
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8")
    code, out, err = toolctl(capsys, "search", "--queries", str(path), "-f", "json")
    assert code == 2, err
    assert out == ""
    assert f"{path}{where}" in err and what in err
    assert "hint:" in err and "Traceback" not in err


def test_missing_queries_file(search_project: Path, capsys: Capture, tmp_path: Path) -> None:
    code, _, err = toolctl(capsys, "search", "--queries", str(tmp_path / "nope.jsonl"))
    assert code == 2 and "cannot read the queries file" in err


@pytest.mark.parametrize(
    "argv",
    [
        ["search"],
        ["search", "weather", "--queries", "q.jsonl"],
        ["search", "   "],
        ["search", "weather", "-k", "0"],
    ],
)
def test_usage_errors(search_project: Path, capsys: Capture, argv: list[str]) -> None:
    code, out, err = toolctl(capsys, *argv)
    assert code == 2, err
    assert out == "" and "Traceback" not in err


def test_lexical_only_says_so(
    search_project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(embed.MODEL_ENV, "off")
    code, out, err = toolctl(capsys, "search", "send an email message", "-f", "json")
    assert code == 0
    assert json.loads(out)["results"][0]["name"] == "sendEmail"
    assert "lexical ranking only" in err and "toolctl-registry[search]" in err


def test_registry_errors_exit_1_and_still_search(search_project: Path, capsys: Capture) -> None:
    (search_project / "tools.d" / "broken.yaml").write_text(
        "toolctl: 1\nname: broken\ndescription: [not, text]\n", encoding="utf-8"
    )
    for _ in range(2):  # cold, then from the kept index
        code, out, err = toolctl(capsys, "search", "read a text file", "-f", "json")
        assert code == 1
        assert json.loads(out)["results"][0]["name"] == "read_file"
        assert "error(s) in the registry" in err
