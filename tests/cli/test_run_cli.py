"""``toolctl run``, ``approve``, ``decline``, ``resume`` and ``runs``: output and exit codes."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from tests.cli_helpers import Capture, toolctl
from toolctl.cli.app import run as cli


def test_run_prints_model_output(project: Path, capsys: Capture) -> None:
    assert toolctl(capsys, "run", "add", "--input", '{"a": 1, "b": 2}')[:2] == (0, "sum is 3\n")


def test_output_views(project: Path, capsys: Capture) -> None:
    args = ("run", "customer", "-i", '{"customerId": "c1"}')
    code, out, _ = toolctl(capsys, *args, "--raw")
    assert code == 0 and json.loads(out)["apiKey"] == "secret-value"
    code, out, _ = toolctl(capsys, *args, "--display")
    assert json.loads(out) == {"displayName": "Acme"}
    code, out, _ = toolctl(capsys, *args, "--format", "json")
    full = json.loads(out)
    assert full["status"] == "succeeded" and full["display"]["input"] == {"customerId": "c1"}
    assert toolctl(capsys, *args, "--raw", "--display")[0] == 2


def test_input_from_file_and_stdin(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "in.json").write_text('{"a": 2, "b": 2}')
    assert toolctl(capsys, "run", "add", "-i", "@in.json")[:2] == (0, "sum is 4\n")
    monkeypatch.setattr("sys.stdin", io.StringIO('{"a": 3, "b": 3}'))
    assert toolctl(capsys, "run", "add", "-i", "-")[:2] == (0, "sum is 6\n")
    code, _, err = toolctl(capsys, "run", "add", "-i", "@missing.json")
    assert code == 2 and "cannot read input file" in err


def test_input_and_context_cannot_both_read_stdin(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    stdin = io.StringIO('{"a": 1, "b": 1}')
    monkeypatch.setattr("sys.stdin", stdin)
    code, _, err = toolctl(capsys, "run", "add", "-i", "-", "-c", "-")
    assert code == 2 and "cannot both read stdin" in err
    assert stdin.read() == '{"a": 1, "b": 1}'  # refused before stdin was read
    # stdin holding "-" is just (invalid) JSON input, not a second reader of stdin
    monkeypatch.setattr("sys.stdin", io.StringIO("-"))
    code, _, err = toolctl(capsys, "run", "add", "-i", "-")
    assert "cannot both read stdin" not in err


def test_tool_errors_exit_1_with_a_clear_message(project: Path, capsys: Capture) -> None:
    code, out, err = toolctl(capsys, "run", "add", "-i", '{"a": "x", "b": 1}')
    assert code == 1 and out == ""
    assert "invalid_input" in err and "/a: 'x' is not of type 'number'" in err
    assert "Traceback" not in err
    code, _, err = toolctl(capsys, "run", "echo", "-i", '{"msg": "a", "msg": "b"}')
    assert code == 1 and "duplicate key 'msg'" in err
    code, _, err = toolctl(capsys, "run", "fail")
    assert code == 1 and "hunter2" not in err
    code, _, err = toolctl(capsys, "run", "sleep", "-i", '{"s": 2}', "--timeout", "0.1")
    assert code == 1 and "timed_out" in err and "may still be running" in err


def test_unknown_tool_is_a_usage_error(project: Path, capsys: Capture) -> None:
    code, _, err = toolctl(capsys, "run", "ad", "-i", "{}")
    assert code == 2 and "no tool named 'ad'" in err and "add" in err


def test_approval_flow(project: Path, capsys: Capture) -> None:
    code, out, err = toolctl(capsys, "run", "deploy", "-i", '{"target": "prod"}')
    run_id = out.strip()
    assert code == 4 and f"toolctl approve {run_id}" in err
    assert "approve_echo" not in err and '"target": "prod"' in err  # what is approved
    code, out, err = toolctl(capsys, "approve", run_id)
    assert code == 4 and out.strip() == run_id
    assert '"question": "deploy prod?"' in err and f"toolctl resume {run_id}" in err
    code, out, err = toolctl(capsys, "resume", run_id, "--data", '{"answer": 1}')
    assert code == 4 and out.strip() == run_id and "resumeSchema" in err
    code, out, _ = toolctl(capsys, "resume", run_id, "--data", '{"answer": "yes"}')
    assert code == 0 and json.loads(out) == {"target": "prod", "answer": "yes"}
    code, _, err = toolctl(capsys, "resume", run_id, "--data", '{"answer": "yes"}')
    assert code == 1 and "already resumed" in err


def test_decline_and_flags(project: Path, capsys: Capture) -> None:
    code, out, _ = toolctl(capsys, "run", "approve_echo", "-i", '{"msg": "x"}')
    code, _, err = toolctl(capsys, "decline", out.strip(), "--reason", "no")
    assert code == 0 and "declined" in err
    code, out, _ = toolctl(capsys, "run", "approve_echo", "-i", '{"msg": "x"}', "--approve")
    assert code == 0 and json.loads(out) == {"msg": "x"}
    code, _, err = toolctl(
        capsys, "run", "approve_echo", "-i", "{}", "--decline", "--reason", "nope"
    )
    assert code == 1 and "declined" in err and "nope" in err


class FakeTTY(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_prompt_shows_escaped_display_input(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("sys.stdin", FakeTTY("y\n"))
    code, _, err = toolctl(
        capsys, "run", "approve_echo", "-i", '{"msg": "ls\\u001b[2K\\rrm -rf ~ \\u202e"}'
    )
    assert code == 0
    assert "say ls\\u{001b}[2K\\u{000d}rm -rf ~ \\u{202e}" in err
    assert "\x1b" not in err and "\u202e" not in err
    monkeypatch.setattr("sys.stdin", FakeTTY("n\n"))
    assert toolctl(capsys, "run", "approve_echo", "-i", '{"msg": "x"}')[0] == 1


def test_runs_commands(project: Path, capsys: Capture) -> None:
    toolctl(capsys, "run", "add", "-i", '{"a": 1, "b": 2}')
    code, out, _ = toolctl(capsys, "run", "bg", "-i", '{"s": 0.1}')
    bg_id = out.strip()
    assert code == 0
    code, out, _ = toolctl(capsys, "runs", "wait", bg_id, "--timeout", "30")
    assert code == 0 and json.loads(out) == {"slept": 0.1}
    code, out, _ = toolctl(capsys, "runs", "list")
    assert code == 0 and "add" in out and "succeeded" in out and bg_id in out
    code, out, _ = toolctl(capsys, "runs", "list", "--tool", "bg", "--format", "json")
    assert [r["run_id"] for r in json.loads(out)] == [bg_id]
    code, out, _ = toolctl(capsys, "runs", "show", bg_id)
    assert code == 0 and "status     succeeded" in out
    code, out, _ = toolctl(capsys, "runs", "show", bg_id, "--format", "json")
    assert json.loads(out)["output"] == {"slept": 0.1}
    # an unknown --format is a usage error everywhere (runs used to ignore it: a table)
    for argv in (("runs", "list"), ("runs", "show", bg_id), ("runs", "wait", bg_id)):
        code, out, err = toolctl(capsys, *argv, "--format", "yaml")
        assert code == 2 and not out and "yaml" in err
    assert toolctl(capsys, "run", "add", "-i", "{}", "--format", "yaml")[0] == 2
    code, out, _ = toolctl(capsys, "run", "echo", "-i", '{"msg": "bg"}', "--background")
    code, out, _ = toolctl(capsys, "runs", "wait", out.strip(), "--timeout", "30")
    assert code == 0 and json.loads(out) == {"msg": "bg"}
    code, out, _ = toolctl(capsys, "run", "bg", "-i", '{"s": 30}')
    code, _, err = toolctl(capsys, "runs", "cancel", out.strip())
    assert code == 0 and "cancelled" in err
    code, _, err = toolctl(capsys, "run", "disabled", "-i", "{}")
    assert code == 2 and "disabled" in err
    assert toolctl(capsys, "runs", "list", "--status", "bogus")[0] == 2
    # an unknown run id is a usage error, like an unknown tool: not 1, "the tool failed"
    for command in (("runs", "show"), ("runs", "wait"), ("runs", "cancel"), ("approve",)):
        code, _, err = toolctl(capsys, *command, "nope")
        assert code == 2 and "no run 'nope'" in err, command


def test_state_option(project: Path, tmp_path: Path, capsys: Capture) -> None:
    state = tmp_path / "other.db"
    toolctl(capsys, "run", "add", "-i", '{"a": 1, "b": 2}', "--state", str(state))
    assert state.exists()
    code, out, _ = toolctl(capsys, "runs", "list", "--state", str(state), "--format", "json")
    assert len(json.loads(out)) == 1
    code, _, err = toolctl(
        capsys, "run", "add", "-i", "{}", "--state", str(tmp_path / "no" / "s.db")
    )
    assert code == 1 and "does not exist" in err


def test_ctrl_c_is_a_cancelled_run(project: Path, capsys: Capture) -> None:
    code, _, err = toolctl(capsys, "run", "interrupt", "-i", "{}")
    assert code == 130 and "cancelled" in err
    code, out, _ = toolctl(capsys, "runs", "list", "--tool", "interrupt", "--format", "json")
    assert json.loads(out)[0]["status"] == "cancelled"


def test_handler_prints_do_not_mix_with_the_result(project: Path, capsys: Capture) -> None:
    code, out, err = toolctl(capsys, "run", "printer", "-i", "{}", "--format", "json")
    assert code == 0 and json.loads(out)["output"] == {"ok": True}
    assert "hello from the handler" in err


class TTYErr(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_progress_shows_on_a_terminal(
    project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    err = TTYErr()
    monkeypatch.setattr("sys.stderr", err)
    assert cli(["run", "progress", "-i", "{}"]) == 0
    assert "progress 1/3 step 1\nprogress 2/3 step 2\nprogress 3/3 step 3\n" in err.getvalue()
