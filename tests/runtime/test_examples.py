"""Every example tool in the repository's tools.d runs through ``toolctl run``.

The weather tool runs against a local HTTP server serving recorded Open-Meteo answers (loopback
only), and reports a clear error when its service is unreachable.
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest

import toolctl
from tests.examples.conftest import fake_weather  # noqa: F401  (the recorded Open-Meteo)
from toolctl.cli.app import run as cli

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.skipif(
        not (ROOT / "tools.d" / "weather.yaml").exists(),
        reason="the example registry is not in this checkout",
    ),
    pytest.mark.timeout(120),
]


@pytest.fixture
def examples(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the example project (its history and sandbox stay in tmp)."""
    root = tmp_path / "project"
    root.mkdir()
    for name in ("tools.d", "examples"):
        shutil.copytree(ROOT / name, root / name)
    shutil.copy(ROOT / "toolctl.yaml", root / "toolctl.yaml")
    (root / "sandbox").mkdir()
    monkeypatch.chdir(root)
    monkeypatch.setenv("TOOLCTL_EXAMPLES_STATE", str(tmp_path / "state"))
    monkeypatch.setenv("TOOLCTL_SANDBOX", str(root / "sandbox"))
    monkeypatch.syspath_prepend(str(root / "examples"))
    return root


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = cli(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_text_tools(examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "run", "reverse", "-i", '{"input": "hello"}')
    assert code == 0 and json.loads(out) == {"output": "olleh"}
    code, out, _ = run(capsys, "run", "word_count", "-i", '{"text": "one two three"}')
    assert code == 0 and out.startswith("3 words")


def test_calculator_runs_isolated(examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(
        capsys, "run", "calculator", "-i", '{"expression": "2 + 3 * 4", "precision": null}'
    )
    assert code == 0 and out.strip() == "2 + 3 * 4 = 14"
    code, _, err = run(
        capsys, "run", "calculator", "-i", '{"expression": "1 / 0", "precision": null}'
    )
    assert code == 1 and "handler_error" in err and "Traceback" not in err


def test_customer_lookup_never_shows_the_key(
    examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(
        capsys, "run", "customer_lookup", "-i", '{"customerId": "C1001"}', "--format", "json"
    )
    result = json.loads(out)
    # The terminal never prints the key, even the raw output (the Python API has it).
    assert code == 0 and result["output"]["apiKey"] == "[REDACTED]"
    key = toolctl.load_project(examples).call("customer_lookup", {"customerId": "C1001"})
    key = key.output["apiKey"]
    assert len(key) > 8 and key not in out
    assert "apiKey" not in json.dumps(result["model_output"])
    code, out, _ = run(capsys, "run", "customer_lookup", "-i", '{"customerId": "C1001"}', "--raw")
    assert code == 0 and key not in out and '"apiKey": "[REDACTED]"' in out
    code, out, _ = run(capsys, "runs", "show", result["run_id"], "--format", "json")
    assert key not in out


def test_write_file_needs_approval(examples: Path, capsys: pytest.CaptureFixture[str]) -> None:
    args = (
        "run",
        "write_file",
        "-i",
        '{"path": "notes/hello.txt", "content": "hi", "mode": "create"}',
    )
    code, out, err = run(capsys, *args)
    run_id = out.strip()
    assert code == 4 and "Allow writing notes/hello.txt" in err
    assert not (examples / "sandbox" / "notes" / "hello.txt").exists()
    code, out, _ = run(capsys, "approve", run_id)
    assert code == 0 and json.loads(out)["created"] is True
    assert (examples / "sandbox" / "notes" / "hello.txt").read_text() == "hi"
    code, out, _ = run(capsys, *args)
    code, _, err = run(capsys, "decline", out.strip(), "--reason", "exists already")
    assert code == 0 and "declined" in err


def test_book_meeting_suspends_and_resumes(
    examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, err = run(
        capsys,
        "run",
        "book_meeting",
        "-i",
        json.dumps(
            {
                "title": "Design review",
                "attendees": ["ana@example.com"],
                "date": "2026-12-05",
                "durationMinutes": 60,
            }
        ),
        "-c",
        '{"timezone": "Europe/Berlin"}',
    )
    run_id = out.strip()
    assert code == 4 and "Book 'Design review' on 2026-12-07" in err
    code, out, _ = run(capsys, "resume", run_id, "--data", '{"confirm": true}')
    assert code == 0 and out.startswith("booked: Design review")
    code, _, err = run(capsys, "resume", run_id, "--data", '{"confirm": true}')
    assert code == 1 and "already resumed" in err


def test_index_files_runs_in_the_background(
    examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, out, _ = run(capsys, "run", "index_files", "-i", '{"path": "examples/data/sample"}')
    run_id = out.strip()
    assert code == 0 and len(run_id) == 20
    code, out, _ = run(capsys, "runs", "wait", run_id, "--timeout", "60")
    # What the model would have read had it run in the foreground: the summary, not JSON.
    assert code == 0 and out.startswith("3 files, 20 lines, 55 words, 386 bytes under ")
    assert "Largest: " in out
    code, out, _ = run(capsys, "runs", "wait", run_id, "--display")
    assert json.loads(out) == {"files": 3, "lines": 20, "words": 55, "bytes": 386, "skipped": 1}


def test_find_text_asks_before_it_is_queued(
    examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    found = '{"path": "examples/data/sample", "phrase": "HELLO"}'
    code, out, err = run(capsys, "run", "find_text", "-i", found)  # no terminal, no answer
    assert code == 4 and "suspended" in err  # asked before any worker was started
    exact = 'matchCase={"action": "accept", "content": {"exact": true}}'
    code, out, _ = run(capsys, "run", "find_text", "-i", found, "--answer", exact)
    assert code == 0
    code, out, _ = run(capsys, "runs", "wait", out.strip(), "--timeout", "60")
    assert code == 0 and json.loads(out) == {"matchCase": True, "matches": [], "truncated": False}


def test_weather_against_a_local_server(
    examples: Path,
    fake_weather: Any,  # noqa: F811  (the fixture imported above)
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = run(capsys, "run", "weather", "-i", '{"city": "Berlin"}')
    parts = json.loads(out)
    assert code == 0 and parts[0]["type"] == "text" and "Berlin" in parts[0]["text"]
    assert parts[1]["type"] == "image-url"
    code, out, _ = run(capsys, "run", "weather", "-i", '{"city": "Berlin"}', "--display")
    assert code == 0 and out.startswith("Berlin: ")
    assert fake_weather.requests  # it really went to the local server


def test_weather_unreachable(
    examples: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("TOOLCTL_WEATHER_API_URL", "http://127.0.0.1:9/v1/forecast")
    monkeypatch.setenv("TOOLCTL_GEOCODING_API_URL", "http://127.0.0.1:9/v1/search")
    code, _, err = run(capsys, "run", "weather", "-i", '{"city": "Berlin"}')
    assert code == 1 and "cannot reach" in err and "Traceback" not in err


def test_every_enabled_example_is_covered(examples: Path) -> None:
    import toolctl

    enabled = {spec.name for spec in toolctl.load().select()}
    # The tools the tests above run (`"run", "<tool>"`), read from this file rather than
    # recorded as they run: the tests may run on several xdist workers, in any order.
    ran = set(re.findall(r'"run",\s*"(\w+)"', Path(__file__).read_text("utf-8")))
    assert enabled <= ran, f"examples without a toolctl run test: {enabled - ran}"


def test_suggest_slug_takes_the_clients_answer(
    examples: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reply = {"role": "assistant", "model": "m", "content": {"type": "text", "text": "Q3 Plans"}}
    answer = "title=" + json.dumps(reply)
    code, out, err = run(
        capsys, "run", "suggest_slug", "-i", '{"text": "Plans for Q3."}', "--answer", answer
    )
    assert code == 0, err
    assert json.loads(out) == {"title": "Q3 Plans", "slug": "q3-plans"}
