"""The ``auth:`` section of toolctl.yaml and tool ``scopes:`` (issue 22): checked when the
project loads, with a located message saying how to fix it."""

from __future__ import annotations

from pathlib import Path

import pytest

from toolctl.authconfig import AuthSettings, auth_settings
from toolctl.cli.app import run as cli
from toolctl.errors import ConfigError

GOOD = {"issuer": "https://idp.example.com", "audience": "https://mcp.example.com/mcp"}


def _where() -> str:
    return "toolctl.yaml:3:1"


def test_a_good_section_and_the_command_line_on_top() -> None:
    settings = auth_settings({"auth": {**GOOD, "scopes": ["toolctl.call"]}}, _where)
    assert settings == AuthSettings(GOOD["issuer"], GOOD["audience"], None, ("toolctl.call",))
    moved = auth_settings({"auth": GOOD}, _where, jwks_uri="https://keys.example.com/jwks")
    assert moved is not None and moved.jwks_uri == "https://keys.example.com/jwks"
    assert auth_settings({}, _where) is None  # no auth: none
    only_flags = auth_settings({}, _where, issuer=GOOD["issuer"], audience=GOOD["audience"])
    assert only_flags == AuthSettings(GOOD["issuer"], GOOD["audience"])


@pytest.mark.parametrize(
    ("section", "message"),
    [
        ({"issuer": "http://idp.example.com", "audience": GOOD["audience"]}, "must be an https://"),
        ({"issuer": GOOD["issuer"]}, "auth.audience is missing"),
        ({**GOOD, "scopes": "toolctl.call"}, "must be a list of scope names"),
        ({**GOOD, "scopes": ["two words"]}, "is not an OAuth scope"),
        ({**GOOD, "jwks": "x"}, "unknown auth setting"),
        ({**GOOD, "issuer": "https://user:pw@idp.example.com"}, "credentials"),
        ({"jwksUri": "https://idp.example.com/jwks"}, "needs an issuer and an audience"),
    ],
)
def test_a_bad_section_is_a_located_config_error(section: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message) as caught:
        auth_settings({"auth": section}, _where)
    assert caught.value.message.startswith("toolctl.yaml:3:1")
    assert caught.value.hint


def test_loopback_http_is_allowed_for_a_local_authorization_server() -> None:
    local = {"issuer": "http://127.0.0.1:9000", "audience": "http://localhost:8000/mcp"}
    assert auth_settings({"auth": local}, _where) is not None


def test_validate_reports_a_bad_auth_section_at_its_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "toolctl.yaml").write_text(
        "tools: tools.d\nauth:\n  issuer: ftp://idp.example.com\n  audience: https://a.example/mcp\n"
    )
    monkeypatch.chdir(tmp_path)
    assert cli(["validate"]) == 1  # as every config error
    err = capsys.readouterr().err
    assert "toolctl.yaml:2:1" in err and "auth.issuer 'ftp://idp.example.com'" in err


def test_serve_refuses_auth_with_a_static_token(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from toolctl.server.security import ServeUsageError, http_security

    monkeypatch.setenv("T", "x" * 32)
    with pytest.raises(ServeUsageError, match="exclude each other"):
        http_security("127.0.0.1", auth_token_env="T", oauth=True)
    # OAuth is authentication enough off loopback (with the host names clients use)
    assert http_security("0.0.0.0", ["mcp.example.com"], oauth=True).token is None


def test_tool_scopes_are_checked_by_the_format(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "t.yaml").write_text(
        "toolctl: 1\nname: t\ndescription: A tool.\nscopes: [files:read, 'bad scope']\n"
    )
    monkeypatch.chdir(tmp_path)
    assert cli(["validate"]) == 1
    err = capsys.readouterr().err
    assert "t.yaml:4:" in err and "bad scope" in err
    import toolctl

    (tmp_path / "tools.d" / "t.yaml").write_text(
        "toolctl: 1\nname: t\ndescription: A tool.\nscopes: [files:read, files:write]\n"
    )
    assert toolctl.load(project=tmp_path, packs=False).get("t").scopes == (
        "files:read",
        "files:write",
    )
