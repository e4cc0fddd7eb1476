"""The settings of a ``toolctl.yaml`` are remembered while its bytes are unchanged, so a command
that loads every tool file from the cache parses no YAML at all (PyYAML is not even imported)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from toolctl import cache
from toolctl import config as config_module
from toolctl.config import find_config
from toolctl.errors import ConfigError


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> list[str]:
    """The files parsed, with the CLI's cache setting on and the cache in a temporary place."""
    monkeypatch.setenv("TOOLCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setattr(cache.DEFAULTS, "cache", True)
    seen: list[str] = []
    real = config_module.loads  # either parser (toolctl.yamlsrc.loads)

    def counting(text: str, file: str = "<string>") -> Any:
        seen.append(Path(file).name)
        return real(text, file)

    monkeypatch.setattr(config_module, "loads", counting)
    return seen


def _project(tmp_path: Path, text: str) -> Path:
    root = tmp_path / "project"
    root.mkdir(exist_ok=True)
    (root / "toolctl.yaml").write_text(text, encoding="utf-8")
    return root


def test_an_unchanged_config_is_parsed_once(tmp_path: Path, parses: list[str]) -> None:
    root = _project(tmp_path, "tools: tools.d\npythonPath: [src]\n")
    first = find_config(root)
    second = find_config(root)
    assert first == second and first is not None
    assert first[1] == {"tools": "tools.d", "pythonPath": ["src"]}
    assert parses == ["toolctl.yaml"]
    _project(tmp_path, "tools: other.d\n")  # any change to the bytes: read afresh
    changed = find_config(root)
    assert changed is not None and changed[1] == {"tools": "other.d"}
    assert parses == ["toolctl.yaml", "toolctl.yaml"]


def test_a_damaged_entry_is_never_trusted(tmp_path: Path, parses: list[str]) -> None:
    root = _project(tmp_path, "tools: tools.d\n")
    find_config(root)
    (entry,) = (tmp_path / "cache" / "configs").iterdir()
    entry.write_bytes(entry.read_bytes().replace(b"tools.d", b"evil.d"))
    found = find_config(root)
    assert found is not None and found[1] == {"tools": "tools.d"}
    assert parses == ["toolctl.yaml", "toolctl.yaml"]


def test_a_config_with_an_error_is_reported_every_time(tmp_path: Path, parses: list[str]) -> None:
    root = _project(tmp_path, "tools: tools.d\ntool: x\n")
    for _ in range(2):
        with pytest.raises(ConfigError, match=r"toolctl\.yaml:2:1: unknown setting"):
            find_config(root)
    assert not (tmp_path / "cache" / "configs").exists()


def test_nothing_is_remembered_without_the_cache(
    tmp_path: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache.DEFAULTS, "cache", False)  # --no-cache, or a library caller
    root = _project(tmp_path, "tools: tools.d\n")
    find_config(root)
    find_config(root)
    assert parses == ["toolctl.yaml", "toolctl.yaml"]
    assert not (tmp_path / "cache").exists()


PROBE = """
import atexit, sys
atexit.register(lambda: print("yaml" in sys.modules or "yaml_rs" in sys.modules, file=sys.stderr))
sys.argv = ["toolctl", *sys.argv[1:]]
from toolctl.cli.app import main
main()
"""


@pytest.mark.slow
def test_a_warm_command_never_imports_pyyaml(tmp_path: Path) -> None:
    root = _project(tmp_path, "tools: tools.d\npythonPath: [.]\n")
    (root / "tools.d").mkdir()
    (root / "tools.d" / "echo.yaml").write_text(
        "toolctl: 1\nname: echo\ndescription: Echoes.\nhandler: echo_handler:run\n"
        "inputSchema: {type: object}\n",
        encoding="utf-8",
    )
    (root / "echo_handler.py").write_text("def run(args):\n    return args\n", encoding="utf-8")
    env = {"TOOLCTL_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin"}

    def imports_yaml(*argv: str) -> bool:
        done = subprocess.run(
            [sys.executable, "-c", PROBE, *argv],
            cwd=root, env=env, capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        return done.stderr.strip().splitlines()[-1] == "True"

    assert imports_yaml("validate")  # cold: every file parsed (by either YAML parser)
    assert not imports_yaml("validate")
    assert not imports_yaml("run", "echo", "--input", '{"a": 1}')
    (root / "toolctl.yaml").write_text("tools: [tools.d]\npythonPath: [.]\n", encoding="utf-8")
    assert imports_yaml("validate")  # the config changed: parsed again


def test_the_remembered_configs_stay_few(
    tmp_path: Path, parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import os

    monkeypatch.setattr(cache, "MAX_CONFIGS", 3)
    entries = tmp_path / "cache" / "configs"
    roots = []
    for i in range(5):  # temporary projects, one config each
        root = tmp_path / f"p{i}"
        root.mkdir()
        (root / "toolctl.yaml").write_text(f"tools: t{i}.d\n", encoding="utf-8")
        before = set(entries.iterdir()) if entries.exists() else set()
        find_config(root)
        for new in set(entries.iterdir()) - before:  # distinct times (the clock is coarse)
            os.utime(new, ns=(i * 10**9, i * 10**9))
        roots.append(root)
    assert len(list(entries.iterdir())) == 3
    parses.clear()
    find_config(roots[-1])  # the newest are kept
    assert parses == []


def test_a_remembered_config_is_readable_by_its_owner_only(
    tmp_path: Path, parses: list[str]
) -> None:
    """A config may name a PostgreSQL history with its password: the copy is no more readable."""
    import stat

    root = _project(tmp_path, "state: postgresql://ann:s3cret@db.example/toolctl\n")
    find_config(root)
    (entry,) = (tmp_path / "cache" / "configs").iterdir()
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600
