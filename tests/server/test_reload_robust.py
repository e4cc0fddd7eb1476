"""``serve --reload`` never exits on a broken change: it keeps the tools and logs why."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import anyio
import pytest

from toolctl.config import project_at
from toolctl.server.reload import RegistryWatcher

from .serve_helpers import stdio_params, wait_for

pytestmark = pytest.mark.timeout(60)

DEEP = "(" * 400 + "a" + ")" * 400


def test_a_deep_pattern_and_a_symlink_loop_keep_the_server_serving(
    registry_dir: Path, tmp_path: Path
) -> None:  # slow: starts a server
    from mcp import Client
    from mcp.client.stdio import stdio_client

    log_path = tmp_path / "server.log"

    def log() -> str:
        return log_path.read_text(encoding="utf-8")

    async def main() -> tuple[list[str], list[str]]:
        params = stdio_params(registry_dir, "--reload", "--log-level", "warning")
        with log_path.open("w", encoding="utf-8") as errlog:
            async with Client(stdio_client(params, errlog=errlog), mode="legacy") as c:

                async def names() -> list[str]:
                    return [t.name for t in (await c.list_tools()).tools]

                before = await names()
                tools = registry_dir / "tools.d"
                (tools / "deep.yaml").write_text(
                    "toolctl: 1\nname: deep\ndescription: d\ninputSchema:\n  type: object\n"
                    f"  properties: {{a: {{type: string, pattern: '{DEEP}'}}}}\n"
                )
                (tools / "l1.yaml").symlink_to("l2.yaml")
                (tools / "l2.yaml").symlink_to("l1.yaml")
                await wait_for(lambda: "still serving the previous" in log(), "the error log")
                return before, await names()

    before, after = anyio.run(main)
    assert after == before
    text = log()
    assert "nests groups 400 deep" in text and "symlink loop" in text
    assert "Traceback" not in text


def test_an_unexpected_failure_in_a_reload_is_logged_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    (tmp_path / "tools.d").mkdir()
    swapped: list[Any] = []

    async def swap(toolset: Any, notify: bool) -> None:
        swapped.append(toolset)

    server = SimpleNamespace(toolset=SimpleNamespace(specs=[1, 2]), swap=swap)
    watcher = RegistryWatcher(server, project_at(tmp_path), selection=None)  # type: ignore[arg-type]

    def broken(**_: Any) -> Any:
        raise RecursionError("maximum recursion depth exceeded")

    monkeypatch.setattr("toolctl.loader.load_registry", broken)
    with caplog.at_level(logging.ERROR, logger="toolctl.server"):
        assert anyio.run(watcher.reload) is False
    assert swapped == []
    assert "still serving the previous 2 tool(s)" in caplog.text


def test_a_reload_loads_packs_only_when_serving_started_with_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.foundation.test_packs import _pack
    from toolctl import loader
    from toolctl.server.toolset import Selection

    tool = "toolctl: 1\nname: {}\ndescription: d\nhandler: os:getcwd\n"
    project = tmp_path / "project"
    (project / "tools.d").mkdir(parents=True)
    (project / "tools.d" / "own.yaml").write_text(tool.format("own"))
    site = tmp_path / "site"  # an installed registry pack, found on sys.path
    _pack(site, "somepack", "somepack", {"packed.yaml": tool.format("packed")})
    monkeypatch.syspath_prepend(str(site))

    def served_after_reload(packs: bool) -> list[str]:
        registry = loader.load_registry(project=project_at(project), packs=packs, cache=False)
        swapped: list[Any] = []

        async def swap(toolset: Any, notify: bool) -> None:
            swapped.append(toolset)

        empty = SimpleNamespace(specs=[], fingerprint={}, listing={}, scopes={})
        server = SimpleNamespace(toolset=empty, swap=swap)
        watcher = RegistryWatcher(
            server,  # type: ignore[arg-type]
            project_at(project),
            Selection((), ()),
            packs=registry.packs,
        )
        assert anyio.run(watcher.reload) is True
        return sorted(swapped[0].specs)

    assert served_after_reload(packs=False) == ["own"]  # --no-packs: still no pack tool
    assert served_after_reload(packs=True) == ["own", "packed"]


def test_a_toolsets_change_in_the_config_is_reloaded_and_notified(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Only toolctl.yaml changes (a toolset turns deferred): the tools' declarations are the
    same, but what ``--search`` lists up front is not, so clients are told to list again."""
    from toolctl import loader
    from toolctl.server.toolset import Selection, build_toolset

    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "a.yaml").write_text(
        "toolctl: 1\nname: a\ndescription: Adds two numbers.\nhandler: os:getcwd\ntoolset: math\n"
    )
    config = "tools: tools.d\nstate: s.db\ntoolsets:\n  math: {{description: Sums, loading: {}}}\n"
    (tmp_path / "toolctl.yaml").write_text(config.format("eager"))
    selection = Selection(search=True)
    project = project_at(tmp_path)
    old = build_toolset(loader.load_registry(project=project, cache=False), selection)
    assert "a" in [t["name"] for t in old.listing["tools"]]
    swapped: list[tuple[Any, bool]] = []

    async def swap(toolset: Any, notify: bool) -> None:
        swapped.append((toolset, notify))

    server = SimpleNamespace(toolset=old, swap=swap)
    watcher = RegistryWatcher(server, project, selection)  # type: ignore[arg-type]
    (tmp_path / "toolctl.yaml").write_text(config.format("deferred").replace("s.db", "t.db"))
    with caplog.at_level(logging.WARNING, logger="toolctl.server"):
        assert anyio.run(watcher.reload) is True
    new, notify = swapped[0]
    assert notify is True
    assert "a" not in [t["name"] for t in new.listing["tools"]]  # deferred: found by search
    assert "toolsets changed" in caplog.text
    # state is applied when serving starts: the server says so instead of half-applying it
    assert "state changed in the config; restart the server to apply it" in caplog.text
    assert watcher.project.settings["state"] == "s.db"
