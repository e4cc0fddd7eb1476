"""The load cache and the config memo are keyed (issue 20, class 4).

Whoever can write a cache directory (a shared volume, a CI cache restored from a pull request's
run, ``TOOLCTL_CACHE_DIR``) but cannot read the key in the user's data directory cannot make
toolctl use an entry: a forged, restored or copied entry is a miss (a cold load), never trusted,
never a crash.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

import pytest

from toolctl import cache, loader, yamlsrc
from toolctl.cli.app import run
from toolctl.config import find_config
from toolctl.loader import load_registry
from toolctl.registry import Registry

from .conftest import write

TOOL = """\
toolctl: 1
name: wipe
description: Delete everything in the workspace.
handler: handlers:real
requireApproval: true
inputSchema: {type: object}
"""
HANDLERS = """\
from pathlib import Path


def real(payload):
    return {"ran": "real"}


def evil(payload):
    Path("EVIL-RAN").write_text("x")
    return {"ran": "evil"}
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A project with its own cache directory, and a data directory for the key."""
    monkeypatch.setenv("TOOLCTL_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TOOLCTL_DATA_DIR", str(tmp_path / "data"))
    root = write(
        tmp_path / "proj",
        {
            "toolctl.yaml": "tools: tools.d\npythonPath: [src]\n",
            "tools.d/wipe.yaml": TOOL,
            "src/handlers.py": HANDLERS,
        },
    )
    monkeypatch.chdir(root)
    return root


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The tool and schema files parsed (a cache hit parses none)."""
    seen: list[str] = []
    real = loader.loads

    def counting(text: str, file: str = "<string>") -> Any:
        seen.append(Path(file).name)
        return real(text, file)

    monkeypatch.setattr(loader, "loads", counting)
    monkeypatch.setattr(yamlsrc, "loads", counting)
    return seen


def _load() -> Registry:
    return load_registry(packs=False, cache=True)


def _shards(tmp_path: Path) -> list[Path]:
    return sorted((tmp_path / "cache" / "files").glob("*.json"))


def _forge(shard: Path, key: bytes | None) -> None:
    """Rewrite the tool's entry to call ``handlers:evil`` without approval, then seal it as an
    attacker can: with the old unkeyed SHA-256 (``key`` None) or a key of their own."""
    data = json.loads(shard.read_bytes().partition(b"\n")[2])
    for entry in data["entries"].values():
        if isinstance(entry, dict) and isinstance(entry.get("data"), dict):
            entry["data"]["handler"] = "handlers:evil"
            entry["data"].pop("requireApproval", None)
    body = json.dumps(data).encode()
    if key is None:
        shard.write_bytes(
            b"toolctl-cache " + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
        )
    else:
        shard.write_bytes(cache._seal(body, key))


@pytest.mark.parametrize("attacker_key", [None, b"k" * 32], ids=["unkeyed", "own-key"])
def test_a_forged_shard_that_swaps_the_handler_is_ignored(
    project: Path,
    tmp_path: Path,
    parses: list[str],
    capsys: pytest.CaptureFixture[str],
    attacker_key: bytes | None,
) -> None:
    cold = _load()
    assert cold.tools["wipe"].handler == "handlers:real"
    [shard] = [s for s in _shards(tmp_path) if b"wipe.yaml" in s.read_bytes()]
    _forge(shard, attacker_key)
    parses.clear()
    warm = _load()
    assert parses == ["wipe.yaml"]  # the forged entry was a miss: the file was read again
    assert warm.tools["wipe"].handler == "handlers:real"
    assert warm.tools["wipe"].require_approval is True
    _forge(shard, attacker_key)
    code = run(["run", "wipe", "--input", "{}"])  # not on a terminal: approval is not asked
    assert code == 4, capsys.readouterr()
    assert "approval required" in capsys.readouterr().err
    assert not (project / "EVIL-RAN").exists()


CITY_TOOL = (
    "toolctl: 1\nname: {name}\ndescription: Look up a city.\ninputSchema: {{type: object, "
    'properties: {{city: {{$ref: "schemas/common.schema.yaml#/$defs/City"}}}}}}\n'
)


def _city(registry: Registry, name: str) -> Any:
    return registry.tools[name].input_schema["$defs"]["common_schema__City"]


@pytest.mark.parametrize("forged", ["a", "b"])
def test_an_entry_cannot_make_another_files_tools_take_its_definitions(
    project: Path, tmp_path: Path, parses: list[str], forged: str
) -> None:
    # a warm load shares the definitions that files' tools add, by their stored text: an
    # entry stating other ones than another file's (even sealed with the key) keeps them
    # to its own tools, whichever file comes first
    write(
        project,
        {
            "tools.d/a.yaml": CITY_TOOL.format(name="a"),
            "tools.d/b.yaml": CITY_TOOL.format(name="b"),
            "tools.d/schemas/common.schema.yaml": "$defs:\n  City: {type: string, minLength: 1}\n",
        },
    )
    cold = _load()
    warm = _load()
    assert _city(warm, "a") is _city(warm, "b")  # one copy, as without the cache
    key = cache.cache_key(tmp_path / "cache", create=False)
    assert key is not None
    for shard in _shards(tmp_path):
        data = json.loads(shard.read_bytes().partition(b"\n")[2])
        parts = data["parts"]  # the shard's part texts, which entries name by index
        for path, entry in data["entries"].items():
            if path.endswith(f"{forged}.yaml"):
                patch = entry["tools"][0][1]["inputSchema"][-1]  # the added $defs
                city = patch[2]["common_schema__City"]
                assert '"minLength":1' in parts[city]  # the definition, as JSON text
                patch[2]["common_schema__City"] = len(parts)  # a text of its own
                parts.append(parts[city].replace('"minLength":1', '"minLength":7'))
        shard.write_bytes(cache._seal(json.dumps(data).encode(), key))
    parses.clear()
    after = _load()
    assert parses == []  # the entries were used
    other = "b" if forged == "a" else "a"
    assert _city(after, forged)["minLength"] == 7  # what its own entry says
    assert _city(after, other) == _city(cold, other) == {"type": "string", "minLength": 1}
    assert _city(after, other) is not _city(after, forged)


def test_a_planted_config_memo_with_another_python_path_is_ignored(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache.DEFAULTS, "cache", True)
    config = project / "toolctl.yaml"
    raw = config.read_bytes()
    planted = {
        "sha": hashlib.sha256(raw).hexdigest(),
        "code": cache.code_fingerprint(),
        "settings": {"tools": "tools.d", "pythonPath": ["/tmp/attacker"]},
    }
    body = json.dumps(planted).encode()
    entry = cache._config_entry(config)
    entry.parent.mkdir(parents=True)
    for sealed in (
        b"toolctl-cache " + hashlib.sha256(body).hexdigest().encode() + b"\n" + body,
        cache._seal(body, b"attacker key".ljust(32, b"!")),
    ):
        entry.write_bytes(sealed)
        found = find_config(project)
        assert found is not None and found[1] == {"tools": "tools.d", "pythonPath": ["src"]}


def test_a_cache_copied_to_another_machine_is_a_cold_load(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    _load()
    parses.clear()
    assert _load().tools["wipe"].handler == "handlers:real"
    assert parses == []  # warm on this machine
    monkeypatch.setenv("TOOLCTL_DATA_DIR", str(tmp_path / "other-machine"))
    assert cache.cache_key(tmp_path / "cache", create=True)  # that machine has its own key
    again = _load()
    assert parses == ["wipe.yaml"] and again.ok  # cold, and correct
    parses.clear()
    _load()
    assert parses == []  # and warm again, under the new machine's key


def test_the_key_is_created_once_0600_in_the_data_dir(project: Path, tmp_path: Path) -> None:
    _load()
    key = tmp_path / "data" / cache.KEY_NAME
    assert stat.S_IMODE(key.stat().st_mode) == 0o600
    first = key.read_bytes()
    _load()
    assert key.read_bytes() == first
    assert not list((tmp_path / "cache").rglob("*.key"))


def test_the_default_data_dir_is_xdg_data_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.delenv("TOOLCTL_DATA_DIR")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert cache.data_dir() == tmp_path / "xdg" / "toolctl"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert cache.data_dir() == tmp_path / "home" / ".local" / "share" / "toolctl"


def test_a_key_inside_the_cache_directory_is_never_used(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    """The key would travel with the cache: then nothing is cached at all."""
    monkeypatch.setenv("TOOLCTL_DATA_DIR", str(tmp_path / "cache" / "keys"))
    _load()
    parses.clear()
    _load()
    assert parses == ["wipe.yaml"]
    assert not (tmp_path / "cache" / "keys").exists()


@pytest.mark.parametrize("how", ["world-readable", "fifo", "garbage", "directory", "empty"])
def test_an_unusable_key_means_no_cache_not_a_crash_or_hang(
    project: Path, tmp_path: Path, parses: list[str], how: str
) -> None:
    key = tmp_path / "data" / cache.KEY_NAME
    key.parent.mkdir()
    if how == "fifo":
        os.mkfifo(key, 0o600)
    elif how == "directory":
        key.mkdir()
    else:
        key.write_text({"world-readable": "ab" * 32, "garbage": "not hex!", "empty": ""}[how])
        key.chmod(0o644 if how == "world-readable" else 0o600)
    for _ in range(2):
        parses.clear()
        assert _load().tools["wipe"].handler == "handlers:real"
        assert parses == ["wipe.yaml"]  # every load cold
    assert not _shards(tmp_path)


def _nested(depth: int) -> str:
    return "[" * depth + "]" * depth


def test_a_deeply_nested_shard_is_a_miss(project: Path, tmp_path: Path, parses: list[str]) -> None:
    _load()
    key = cache.cache_key(tmp_path / "cache", create=False)
    assert key is not None
    for shard in _shards(tmp_path):  # sealed with the right key: nested far past the stack
        shard.write_bytes(cache._seal(f'{{"context": {_nested(200_000)}}}'.encode(), key))
    parses.clear()
    assert _load().ok
    assert parses == ["wipe.yaml"]


def test_a_deeply_nested_config_memo_is_a_miss(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache.DEFAULTS, "cache", True)
    config = project / "toolctl.yaml"
    find_config(project)
    key = cache.cache_key(tmp_path / "cache", create=False)
    assert key is not None
    cache._config_entry(config).write_bytes(cache._seal(_nested(200_000).encode(), key))
    found = find_config(project)
    assert found is not None and found[1]["pythonPath"] == ["src"]


@pytest.mark.timeout(60)
def test_a_fifo_planted_as_a_shard_or_config_memo_is_a_miss_not_a_hang(
    project: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    monkeypatch.setattr(cache.DEFAULTS, "cache", True)
    _load()
    for shard in _shards(tmp_path):
        shard.unlink()
        os.mkfifo(shard, 0o600)
    memo = cache._config_entry(project / "toolctl.yaml")
    memo.unlink()
    os.mkfifo(memo, 0o600)
    parses.clear()
    assert _load().tools["wipe"].handler == "handlers:real"
    assert parses == ["wipe.yaml"]  # and the config was read afresh, without waiting
