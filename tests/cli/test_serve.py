"""``toolctl serve`` at the command line: install hint, lazy SDK import, refusing bad registries."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from tests.server.serve_helpers import run_serve
from toolctl.cli.app import run

REGISTRY = Path(__file__).resolve().parents[1] / "server" / "registry"


def test_serve_without_the_sdk_says_what_to_install(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "mcp", None)  # as if the extra were not installed
    assert run(["serve", str(REGISTRY / "tools.d")]) == 1
    err = capsys.readouterr().err
    assert "toolctl serve needs the MCP Python SDK" in err
    assert "pip install 'toolctl-registry[mcp]'" in err
    assert "from a checkout: pip install '.[mcp]'" in err


def test_other_commands_do_not_import_the_sdk() -> None:
    code = (
        "import sys; from toolctl.cli.app import run; run(['list', '--format', 'json']); "
        "sys.stderr.write(str('mcp' in sys.modules))"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=REGISTRY, capture_output=True, text=True, timeout=60
    )
    assert proc.stderr.endswith("False")


def test_serve_refuses_a_registry_with_errors(tmp_path: Path) -> None:
    pytest.importorskip("mcp")
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "bad.yaml").write_text("toolctl: 1\nname: x\n")
    proc = run_serve(tmp_path)
    assert proc.returncode == 1
    assert "tools.d/bad.yaml:" in proc.stderr
    assert "error: not serving a registry with errors\n  hint: fix them" in proc.stderr


def test_serve_names_unknown_and_disabled_tools() -> None:
    pytest.importorskip("mcp")
    for tool, expected in (
        ("nope", "no tool named 'nope'"),
        ("disabled_tool", "tool 'disabled_tool' is disabled (enabled: false at tools.d/"),
    ):
        proc = run_serve(REGISTRY, "--tool", tool)
        assert proc.returncode == 2  # usage errors, as in `toolctl run`
        assert expected in proc.stderr
        assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("port", ["99999", "65536", "-1"])
def test_a_port_out_of_range_is_a_usage_error_not_another_port(
    port: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # 99999 used to wrap around to 34463 and serve there.
    assert run(["serve", "--transport", "http", "--port", port]) == 2
    assert "--port" in capsys.readouterr().err


def test_a_request_size_limit_below_one_byte_is_a_usage_error(
    capsys: pytest.CaptureFixture[str],
) -> None:
    # 0 used to start a server that answered every request with 413.
    assert run(["serve", "--transport", "http", "--port", "0", "--max-request-bytes", "0"]) == 2
    assert "--max-request-bytes" in capsys.readouterr().err


@pytest.mark.parametrize(
    ("argv", "named"),
    [
        (["--port", "8080"], "--port applies only to --transport http"),
        (["--host", "0.0.0.0", "--auth-token-env", "T"], "--host, --auth-token-env apply only"),
        (["--transport", "stdio", "--allowed-origin", "https://a.example"], "--allowed-origin"),
    ],
)
def test_http_options_with_stdio_are_a_usage_error_not_ignored(
    argv: list[str], named: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # `serve --port 8080` used to serve on stdio, silently ignoring the port
    assert run(["serve", str(REGISTRY / "tools.d"), *argv]) == 2
    err = capsys.readouterr().err
    assert named in err and "add --transport http" in err
