"""The load cache: reused while nothing it depends on changed, rebuilt otherwise, never trusted
when damaged, safe with concurrent runs, and bypassed by ``--no-cache``."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from toolctl import cache, loader, yamlsrc
from toolctl.cli.app import run
from toolctl.loader import load_registry
from toolctl.registry import Registry

from .conftest import write

TOOL = """\
toolctl: 1
name: {name}
description: Look up a city's weather.
handler: handlers:lookup
inputSchema:
  type: object
  properties:
    city: {{$ref: "schemas/common.schema.yaml#/$defs/City"}}
  required: [city]
inputExamples:
  - input: {{city: Paris}}
"""
SCHEMA = """\
$defs:
  City: {type: string, minLength: 1}
"""
HANDLERS = "def lookup(payload):\n    return payload\n"


@pytest.fixture(autouse=True)
def default_cache_place(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests are about where the cache lives: no suite-wide ``TOOLCTL_CACHE_DIR``."""
    monkeypatch.delenv("TOOLCTL_CACHE_DIR", raising=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return write(
        tmp_path / "proj",
        {
            "toolctl.yaml": "tools: tools.d\npythonPath: [src]\n",
            "tools.d/weather.yaml": TOOL.format(name="weather"),
            "tools.d/other.yaml": TOOL.format(name="other"),
            "tools.d/schemas/common.schema.yaml": SCHEMA,
            "src/handlers.py": HANDLERS,
        },
    )


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The files the loader parses (a cache hit parses nothing)."""
    seen: list[str] = []
    real = loader.loads

    def counting(text: str, file: str = "<string>") -> Any:
        if Path(file).name != "toolctl.yaml":  # the configuration is read every time
            seen.append(Path(file).name)
        return real(text, file)

    monkeypatch.setattr(loader, "loads", counting)  # tool files
    monkeypatch.setattr(yamlsrc, "loads", counting)  # $ref-d schema files (load_file)
    return seen


def _load(project: Path, monkeypatch: pytest.MonkeyPatch, **kw: Any) -> Registry:
    monkeypatch.chdir(project)
    return load_registry(packs=False, cache=True, **kw)


def _summary(registry: Registry) -> tuple[Any, ...]:
    return (
        {
            n: (t.digest, str(t.location), t.locate("inputSchema", "required"))
            for n, t in registry.tools.items()
        },
        [d.format() for d in registry.diagnostics],
    )


def _entries(project: Path) -> list[Path]:
    return sorted((project / ".toolctl" / "cache" / "files").glob("*.json"))


def test_second_load_parses_nothing_and_gives_the_same_registry(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    cold = _load(project, monkeypatch)
    assert sorted(parses) == ["common.schema.yaml", "other.yaml", "weather.yaml"]
    parses.clear()
    warm = _load(project, monkeypatch)
    assert parses == []
    assert _summary(warm) == _summary(cold)
    # bundled schemas come back bundled
    assert warm.tools["weather"].input_schema["properties"]["city"]["$ref"].startswith("#/$defs/")
    assert (project / ".toolctl" / "cache" / ".gitignore").read_text().strip().endswith("*")


def test_library_default_does_not_cache(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    load_registry(packs=False)
    assert not (project / ".toolctl").exists()


def test_changed_file_is_reloaded_alone(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    _load(project, monkeypatch)
    parses.clear()
    path = project / "tools.d" / "weather.yaml"
    path.write_text(TOOL.format(name="weather").replace("a city's", "the"), encoding="utf-8")
    registry = _load(project, monkeypatch)
    assert sorted(parses) == ["common.schema.yaml", "weather.yaml"]  # not other.yaml
    assert registry.tools["weather"].description == "Look up the weather."


def test_changed_schema_file_reloads_the_files_that_refer_to_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    _load(project, monkeypatch)
    parses.clear()
    (project / "tools.d/schemas/common.schema.yaml").write_text(
        SCHEMA.replace("minLength: 1", "minLength: 10"), encoding="utf-8"
    )
    registry = _load(project, monkeypatch)
    assert sorted(parses) == ["common.schema.yaml", "other.yaml", "weather.yaml"]
    # the example "Paris" is now too short: the new schema was used
    assert {d.code for d in registry.diagnostics} == {"TC304"}


def test_changed_handler_file_is_checked_again(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    assert _load(project, monkeypatch).ok
    parses.clear()
    (project / "src/handlers.py").write_text("def renamed(payload):\n    return 1\n")
    registry = _load(project, monkeypatch)
    assert sorted(parses) == ["common.schema.yaml", "other.yaml", "weather.yaml"]
    assert {d.code for d in registry.diagnostics} == {"TC402"}


def test_new_handler_module_shadowing_the_old_one_is_noticed(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    write(project, {"toolctl.yaml": "tools: tools.d\npythonPath: [first, src]\n"})
    assert _load(project, monkeypatch).ok
    write(project, {"first/handlers.py": "x = 1\n"})  # found first now, and has no `lookup`
    assert {d.code for d in _load(project, monkeypatch).diagnostics} == {"TC402"}


def test_changed_configuration_is_a_miss(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    assert _load(project, monkeypatch).ok
    write(project, {"toolctl.yaml": "tools: tools.d\npythonPath: [elsewhere]\n"})
    parses.clear()
    registry = _load(project, monkeypatch)
    assert "weather.yaml" in parses
    assert {d.code for d in registry.diagnostics} == {"TC402"}


def test_other_toolctl_version_is_a_miss(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    _load(project, monkeypatch)
    monkeypatch.setattr(cache, "__version__", "99.0")
    cache.code_fingerprint.cache_clear()
    try:
        parses.clear()
        _load(project, monkeypatch)
        assert "weather.yaml" in parses
    finally:
        cache.code_fingerprint.cache_clear()


def _rewrite(shard: Path, change: Callable[[dict[str, Any]], None]) -> None:
    """Edit each entry of a cache file and give the file a correct digest (a well-formed but
    wrong cache file)."""
    data = json.loads(shard.read_bytes().partition(b"\n")[2])
    for entry in data["entries"].values():
        change(entry)
    _write_shard(shard, data)


def _write_shard(shard: Path, data: dict[str, Any]) -> None:
    """Seal ``data`` with this user's key, as toolctl does (an entry that checks out)."""
    key = cache.cache_key(shard.parent.parent, create=False)
    assert key is not None
    shard.write_bytes(cache._seal(json.dumps(data).encode(), key))


def _wrong_context(shard: Path) -> None:
    data = json.loads(shard.read_bytes().partition(b"\n")[2])
    data["context"] = "0" * 64
    _write_shard(shard, data)


def _bad_tools(entry: dict[str, Any]) -> None:
    entry["tools"] = [[["nope"], {}, False, 1, 1]]


def _bad_positions(entry: dict[str, Any]) -> None:
    entry["pos"] = ["not base64!", ""]


def _not_a_dict(shard: Path) -> None:
    data = json.loads(shard.read_bytes().partition(b"\n")[2])
    data["entries"] = {path: [1, 2] for path in data["entries"]}
    _write_shard(shard, data)


def _bad_part_names(stored: Any) -> Callable[[dict[str, Any]], None]:
    """Name ``stored`` instead of each part bundling made (kept as JSON text in the shard's
    ``parts``, see ``cache._Parts``) and instead of each definition of an added ``$defs``."""

    def change(entry: dict[str, Any]) -> None:
        for tool in entry.get("tools", []):
            for patches in tool[1].values():
                for patch in patches:
                    if len(patch) == 3:
                        defs = isinstance(patch[2], dict)
                        patch[2] = dict.fromkeys(patch[2], stored) if defs else stored

    return change


def _bad_dependency_names(entry: dict[str, Any]) -> None:
    """Name a dependency record the shard's ``deps`` does not have (the schema file's)."""
    if "files" in entry:
        entry["files"] = [1000]


def _bad_parts(stored: Any) -> Callable[[Path], None]:
    """Store ``stored`` instead of each text in a shard's ``parts``."""

    def change(shard: Path) -> None:
        data = json.loads(shard.read_bytes().partition(b"\n")[2])
        assert data["parts"]  # every entry of the project adds a definition
        data["parts"] = [stored for _ in data["parts"]]
        _write_shard(shard, data)

    return change


def _no_parts(shard: Path) -> None:
    data = json.loads(shard.read_bytes().partition(b"\n")[2])
    del data["parts"]
    _write_shard(shard, data)


DAMAGE: dict[str, Callable[[Path], None]] = {
    "truncated": lambda p: p.write_bytes(p.read_bytes()[: len(p.read_bytes()) // 2]),
    "garbage": lambda p: p.write_bytes(os.urandom(300)),
    "empty": lambda p: p.write_bytes(b""),
    "flipped byte": lambda p: p.write_bytes(p.read_bytes().replace(b"Look up", b"Look at", 1)),
    "wrong version": _wrong_context,
    "bad tools": lambda p: _rewrite(p, _bad_tools),
    "bad positions": lambda p: _rewrite(p, _bad_positions),
    "entry not an object": _not_a_dict,
    "shared part not JSON": _bad_parts("{not json"),
    "shared part not text": _bad_parts(5),
    "shared parts missing": _no_parts,
    "part named by text": lambda p: _rewrite(p, _bad_part_names('{"type":"string"}')),
    "part index out of range": lambda p: _rewrite(p, _bad_part_names(1000)),
    "part index negative": lambda p: _rewrite(p, _bad_part_names(-1)),
    "dependency index out of range": lambda p: _rewrite(p, _bad_dependency_names),
}


@pytest.mark.parametrize("damage", sorted(DAMAGE))
def test_damaged_entry_is_ignored_and_rebuilt(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str], damage: str
) -> None:
    cold = _load(project, monkeypatch)
    for entry in _entries(project):
        DAMAGE[damage](entry)
    parses.clear()
    again = _load(project, monkeypatch)
    assert _summary(again) == _summary(cold)
    assert sorted(parses) == ["common.schema.yaml", "other.yaml", "weather.yaml"]
    parses.clear()
    assert _summary(_load(project, monkeypatch)) == _summary(cold)  # rebuilt: a hit again
    assert parses == []


def test_entry_is_renamed_for_another_working_directory(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    (project / "tools.d/schemas/common.schema.yaml").write_text(
        SCHEMA.replace("{type: string, minLength: 1}", "{$ref: '#/$defs/Missing'}")
    )
    first = _load(project, monkeypatch)
    assert {d.file for d in first.diagnostics} == {"tools.d/schemas/common.schema.yaml"}
    monkeypatch.chdir(project / "tools.d")
    parses.clear()
    second = load_registry(project.joinpath("tools.d"), packs=False, cache=True)
    assert parses == []
    assert {d.file for d in second.diagnostics} == {"schemas/common.schema.yaml"}


def _cli(project: Path, monkeypatch: pytest.MonkeyPatch, *args: str) -> int:
    monkeypatch.chdir(project)
    return run([*args])


def _plant_lie(project: Path) -> None:
    """Make every entry claim an error the files do not have (a cache used = the error shows)."""

    def lie(data: dict[str, Any]) -> None:
        if "diagnostics" in data:
            data["diagnostics"].append(
                {
                    "severity": "error",
                    "code": "TC999",
                    "message": "planted",
                    "file": data["display"],
                    "line": 1,
                    "col": 1,
                    "pointer": "",
                    "hint": None,
                    "tool": None,
                }
            )

    for entry in _entries(project):
        _rewrite(entry, lie)


def test_cli_uses_the_cache_and_no_cache_bypasses_it(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli(project, monkeypatch, "validate") == 0
    assert _entries(project)
    _plant_lie(project)
    assert _cli(project, monkeypatch, "validate") == 1  # the (planted) entry was used
    assert "TC999" in capsys.readouterr().err
    assert _cli(project, monkeypatch, "--no-cache", "validate") == 0
    assert "TC999" not in capsys.readouterr().err
    monkeypatch.setenv("TOOLCTL_NO_CACHE", "1")
    _cli(project, monkeypatch, "lint")
    assert "TC999" not in capsys.readouterr().err


def test_no_cache_writes_nothing(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for command in (["validate"], ["lint"], ["export", "openai"], ["list"]):
        assert _cli(project, monkeypatch, "--no-cache", *command) == 0
    assert not (project / ".toolctl").exists()


def test_cli_settings_do_not_leak_into_the_library(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert _cli(project, monkeypatch, "validate") == 0
    assert cache.LoadDefaults() == cache.DEFAULTS


def test_unwritable_cache_directory_only_means_no_cache(
    project: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("TOOLCTL_CACHE_DIR", str(blocker / "cache"))
    assert _load(project, monkeypatch).ok
    assert _load(project, monkeypatch).ok


def test_project_without_config_uses_the_user_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    tools = write(tmp_path / "bare", {"t.yaml": "toolctl: 1\nname: t\ndescription: A tool.\n"})
    monkeypatch.chdir(tmp_path)
    load_registry(tools, packs=False, cache=True)
    assert list((tmp_path / "xdg" / "toolctl" / "files").glob("*.json"))
    assert not (tools / ".toolctl").exists()


CONCURRENT = """
import sys
from toolctl.cli.app import run
codes = {run(["validate"]) for _ in range(int(sys.argv[1]))}
sys.exit(max(codes))
"""


def test_concurrent_runs_never_see_half_an_entry(project: Path) -> None:
    env = {**os.environ, "NO_COLOR": "1"}
    env.pop("TOOLCTL_NO_CACHE", None)
    # many files, so the writers overlap
    for i in range(40):
        write(project, {f"tools.d/t{i}.yaml": TOOL.format(name=f"tool_{i}")})
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", CONCURRENT, "3"],
            cwd=project,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(4)
    ]
    results = [(p.wait(timeout=120), p.stderr.read() if p.stderr else "") for p in procs]
    for proc in procs:
        for stream in (proc.stdout, proc.stderr):
            if stream:
                stream.close()
    assert all(code == 0 for code, _ in results), results
    lines = {line for _, err in results for line in err.splitlines()}
    assert lines == {"ok: 42 tool(s) in tools.d"}
    assert not list((project / ".toolctl" / "cache" / "files").glob(".*.tmp"))
    store = cache.LoadCache(project / ".toolctl" / "cache", [project / "src"])
    for path in (project / "tools.d").glob("*.yaml"):
        assert store.read(path.resolve()) is not None


def test_a_reinstalled_checking_library_is_a_miss(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Which schema patterns compile (TC301) is the ``regex`` package's call: a reinstall of a
    checking library (its files get another size and time) changes the fingerprint."""
    assert "regex" in cache.CHECKERS
    library = tmp_path / "site" / "fakechecker.py"
    library.parent.mkdir()
    library.write_text("VERSION = 1\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(library.parent))
    before = cache.code_fingerprint.__wrapped__(("fakechecker",))
    assert cache.code_fingerprint.__wrapped__(("fakechecker",)) == before
    library.write_text("VERSION = 2  # reinstalled\n", encoding="utf-8")
    assert cache.code_fingerprint.__wrapped__(("fakechecker",)) != before


def test_an_edited_added_or_removed_source_file_changes_the_code_stats(tmp_path: Path) -> None:
    """What :func:`cache.code_fingerprint` reads of toolctl's own files: an edit in place (an
    editable install), a new module in a subpackage or a removed one shows; bytecode does not."""
    package = tmp_path / "pkg"
    (package / "sub" / "__pycache__").mkdir(parents=True)
    (package / "a.py").write_text("A = 1\n", encoding="utf-8")
    (package / "sub" / "b.json").write_text("{}", encoding="utf-8")
    before = cache.source_stats(str(package))
    assert [name for name, _ in before] == ["a.py", os.path.join("sub", "b.json")]
    (package / "sub" / "__pycache__" / "b.cpython.pyc").write_bytes(b"\0")
    (package / "notes.txt").write_text("not code", encoding="utf-8")
    assert cache.source_stats(str(package)) == before
    (package / "a.py").write_text("A = 22\n", encoding="utf-8")
    edited = cache.source_stats(str(package))
    assert edited != before
    (package / "sub" / "c.py").write_text("", encoding="utf-8")
    assert len(cache.source_stats(str(package))) == 3
    (package / "sub" / "c.py").unlink()
    assert cache.source_stats(str(package)) == edited


def test_installing_an_export_format_is_a_miss_for_its_provider_options(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    """TC206 (a providerOptions key no format reads) depends on the formats installed."""
    from toolctl.spec.providers import GROUP, installed_format_names

    path = project / "tools.d" / "weather.yaml"
    path.write_text(TOOL.format(name="weather") + "providerOptions:\n  acme: {x: 1}\n")
    assert "TC206" in {d.code for d in _load(project, monkeypatch).diagnostics}
    site = project.parent / "site"  # a distribution declaring an `acme` export format
    write(
        site,
        {
            "acme-1.0.dist-info/METADATA": "Metadata-Version: 2.1\nName: acme\nVersion: 1.0\n",
            "acme-1.0.dist-info/entry_points.txt": f"[{GROUP}]\nacme = acme:EXPORTER\n",
        },
    )
    monkeypatch.syspath_prepend(str(site))
    parses.clear()
    try:
        registry = _load(project, monkeypatch)
        assert "weather.yaml" in parses
        assert "other.yaml" not in parses  # no providerOptions: still a hit
        assert "TC206" not in {d.code for d in registry.diagnostics}
    finally:
        installed_format_names.cache_clear()


def test_a_warm_load_does_not_scan_installed_distributions(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    """Which formats and packs are installed is remembered while ``sys.path`` is unchanged:
    scanning every distribution's metadata costs more than a small warm `validate`."""
    import importlib.metadata

    import importlib_metadata

    path = project / "tools.d" / "weather.yaml"
    path.write_text(TOOL.format(name="weather") + "providerOptions:\n  openai: {strict: true}\n")
    _load(project, monkeypatch)
    scans: list[str] = []
    for module in (importlib.metadata, importlib_metadata):
        real = module.entry_points

        def counting(*a: Any, _real: Any = real, **kw: Any) -> Any:
            scans.append(str(kw.get("group")))
            return _real(*a, **kw)

        monkeypatch.setattr(module, "entry_points", counting)
    parses.clear()
    registry = _load(project, monkeypatch)
    assert parses == [] and scans == []
    assert sorted(registry.tools) == ["other", "weather"]


def test_entries_of_deleted_files_are_dropped_on_the_next_write(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cache does not keep growing with files that are gone (renamed, temporary projects)."""

    def cached_paths() -> set[str]:
        found: set[str] = set()
        for shard in _entries(project):
            found.update(json.loads(shard.read_bytes().partition(b"\n")[2])["entries"])
        return found

    tools = project / "tools.d"
    weather = tools / "weather.yaml"
    store = cache.LoadCache(project / "unused", [])
    # a file in weather.yaml's shard: only the shards a load writes are rewritten
    gone = next(
        p
        for p in (tools / f"gone{i}.yaml" for i in range(1000))
        if store._shard_of(p) == store._shard_of(weather)
    )
    gone.write_text(TOOL.format(name="gone"), encoding="utf-8")
    _load(project, monkeypatch)
    assert str(gone) in cached_paths()
    gone.unlink()
    weather.write_text(TOOL.format(name="weather").replace("a city's", "the"), encoding="utf-8")
    _load(project, monkeypatch)  # rewrites weather.yaml's shard
    assert str(gone) not in cached_paths()
    assert {str(weather), str(tools / "other.yaml")} <= cached_paths()


def test_remembered_scans_stay_few_as_sys_path_changes(tmp_path: Path) -> None:
    """Each ``sys.path`` state (every install into site-packages) remembers its scan anew: the
    old ones go, or every warm command would read an ever larger shard."""
    directory = tmp_path / "cache"
    for i in range(200):  # as many installs, each run remembering the list once
        store = cache.LoadCache(directory, [])
        assert store.remember("<entry points x>", [f"state {i}"], lambda i=i: [i]) == [i]
        store.flush()
    kept: list[str] = []
    for shard in (directory / "files").glob("*.json"):
        kept += json.loads(shard.read_bytes().partition(b"\n")[2])["entries"]
    assert 0 < len(kept) <= cache.SHARDS * (cache.MAX_REMEMBERED + 1)
    latest = cache.LoadCache(directory, [])  # the current state is still remembered
    assert latest.remember("<entry points x>", ["state 199"], lambda: pytest.fail("scanned")) == [
        199
    ]


def test_a_pack_installed_between_loads_of_one_process_is_seen_and_remembered(
    project: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A server reloading (or any process loading twice) sees a pack installed since its first
    load, and remembers the new list for the next process, not the first load's."""
    from .test_packs import _pack, _tool

    monkeypatch.chdir(project)
    try:
        assert "acme_search" not in load_registry(cache=True).tools
        site = project.parent / "site"
        _pack(site, "acme-tools", "acme_tools", {"search.yaml": _tool("acme_search")})
        monkeypatch.syspath_prepend(str(site))  # installed: sys.path's state changes
        assert "acme_search" in load_registry(cache=True).tools
        store = cache.LoadCache(project / ".toolctl" / "cache", [project / "src"])
        remembered = store.remember(
            f"<entry points {loader.REGISTRY_GROUP}>",
            cache.import_path_key(),
            lambda: pytest.fail("not remembered"),
        )
        assert ["acme_tools", "acme_tools.registry", "acme-tools"] in remembered
    finally:
        loader.forget_installed()  # the pack's directory goes with tmp_path


def test_a_schema_file_reached_through_another_invalidates_every_tool(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    # both tools name places.schema.yaml only; its Place names common.schema.yaml's City.
    # The second tool reuses the definition bundled for the first, and depends on both files.
    place = "$defs:\n  Place: {properties: {city: {$ref: 'common.schema.yaml#/$defs/City'}}}\n"
    tool = TOOL.replace("common.schema.yaml#/$defs/City", "places.schema.yaml#/$defs/Place")
    write(
        project,
        {
            "tools.d/schemas/places.schema.yaml": place,
            "tools.d/weather.yaml": tool.format(name="weather").replace(
                "{city: Paris}", "{city: {city: Paris}}"
            ),
            "tools.d/other.yaml": tool.format(name="other").replace(
                "{city: Paris}", "{city: {city: Paris}}"
            ),
        },
    )
    assert _load(project, monkeypatch).ok
    parses.clear()
    (project / "tools.d/schemas/common.schema.yaml").write_text(
        SCHEMA.replace("minLength: 1", "minLength: 10"), encoding="utf-8"
    )
    registry = _load(project, monkeypatch)
    assert "other.yaml" in parses and "weather.yaml" in parses
    assert sorted((d.code, d.tool) for d in registry.diagnostics) == [
        ("TC304", "other"),
        ("TC304", "weather"),
    ]


CITY = '{$ref: "schemas/common.schema.yaml#/$defs/City"}'


def _sharing_tool(name: str, n: int) -> str:
    """A tool naming the same definitions as its neighbours, with $defs of its own, a float,
    a reference in a list and an approval condition."""
    mode = '{allOf: [{$ref: "#/$defs/Mode"}, {minLength: N}]}'.replace("N", str(n))
    return (
        f"  - name: {name}\n    description: Names shared definitions.\n"
        f"    handler: handlers:lookup\n"
        f"    inputSchema:\n      type: object\n      properties:\n        city: {CITY}\n"
        f"        near: {{type: array, prefixItems: [{CITY}]}}\n        mode: {mode}\n"
        f"      $defs: {{Mode: {{type: string, maxLength: 1.5e1}}}}\n"
        f"    outputSchema: {{properties: {{where: {CITY}}}}}\n"
        f"    requireApproval: {{when: {{properties: {{city: {CITY}}}}}}}\n"
    )


def test_warm_bundled_schemas_equal_the_cold_ones_and_share_what_tools_share(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    # several tools of one file naming the same definitions, with $defs of their own, a
    # float, a reference in a list and an approval condition: the entry stores patches
    tools = "".join(_sharing_tool(f"t{i}", i % 2) for i in range(4))
    write(project, {"tools.d/many.yaml": f"toolctl: 1\ntools:\n{tools}"})
    keys = ("input_schema", "output_schema", "approval_when")
    cold = _load(project, monkeypatch)
    assert [d.format() for d in cold.diagnostics] == []
    parses.clear()
    warm = _load(project, monkeypatch)
    assert parses == []  # every entry rebuilt
    assert _summary(warm) == _summary(cold)
    for name, spec in cold.tools.items():
        for key in keys:
            assert json.dumps(getattr(warm.tools[name], key)) == json.dumps(getattr(spec, key))
    t0, t2 = warm.tools["t0"], warm.tools["t2"]
    # what the bundler shares the entry holds once: not a copy per tool once decoded
    assert t0.output_schema["$defs"] is t2.output_schema["$defs"]
    city = t0.input_schema["$defs"]["common_schema__City"]
    assert city is t2.input_schema["$defs"]["common_schema__City"]
    assert warm.tools["t0"].raw["inputSchema"]["properties"]["city"]["$ref"].startswith("schemas/")


def test_warm_files_naming_the_same_definitions_hold_one_copy_of_them(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    # each file's entry is decoded apart: without sharing across files a registry of 100
    # files held 100 copies of the definitions its tools bundle
    files = {
        f"tools.d/f{i}.yaml": f"toolctl: 1\ntools:\n{_sharing_tool(f't{i}', 1)}" for i in range(3)
    }
    write(project, files)
    cold = _load(project, monkeypatch)
    parses.clear()
    warm = _load(project, monkeypatch)
    assert parses == []
    for name, spec in cold.tools.items():
        assert json.dumps(warm.tools[name].input_schema) == json.dumps(spec.input_schema)
    t0, t1, t2 = (warm.tools[f"t{i}"] for i in range(3))
    assert t0.output_schema["$defs"] is t1.output_schema["$defs"] is t2.output_schema["$defs"]
    city = t0.input_schema["$defs"]["common_schema__City"]  # added to the tool's own $defs
    assert city is t2.input_schema["$defs"]["common_schema__City"]


def _spread_registry(project: Path, files: int) -> list[str]:
    """``files`` tool files over (nearly) every shard, named so that their order is not the
    shards': shared definitions, two files defining the same tool name (which one is kept and
    the TC203 message follow the files' order), one with an error, one that does not parse,
    one with a ``# toolctl:`` comment. Their paths."""
    names = {}
    for i in range(files):
        tools = _sharing_tool(f"t{i:02}", i % 3) + _sharing_tool(f"u{i:02}", i % 2)
        names[f"tools.d/f{i:02}.yaml"] = f"toolctl: 1\ntools:\n{tools}"
    names["tools.d/f05.yaml"] = names["tools.d/f05.yaml"].replace("name: u05", "name: dup")
    names["tools.d/f31.yaml"] = names["tools.d/f31.yaml"].replace("name: t31", "name: dup")
    names["tools.d/f12.yaml"] = names["tools.d/f12.yaml"].replace("1.5e1", "-1")  # an error
    names["tools.d/f20.yaml"] = names["tools.d/f20.yaml"] + "  - name: [broken\n"
    names["tools.d/f27.yaml"] = "# toolctl: ignore TL101\n" + names["tools.d/f27.yaml"]
    write(project, names)
    return [str(project / name) for name in names]


def _whole(registry: Registry) -> tuple[Any, ...]:
    """Everything a command shows of a registry, in its order."""
    keys = ("raw", "input_schema", "output_schema", "approval_when")
    tools = registry.tools.items()
    return (
        [(n, str(t.location), json.dumps([getattr(t, k) for k in keys])) for n, t in tools],
        [d.to_dict() for d in registry.diagnostics],
        list((registry.directive_files or {}).items()),
    )


def test_a_warm_load_over_many_shards_gives_the_cold_registry_one_shard_at_a_time(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    paths = _spread_registry(project, 40)
    assert len({zlib.crc32(os.fsencode(p)) % cache.SHARDS for p in paths}) >= 12
    cold = _load(project, monkeypatch)
    codes = {d.code for d in cold.diagnostics}
    assert {"TC203", "TC101", "TC301"} <= codes and len(cold.tools) > 70  # the cases are there
    decoded: list[dict[str, Any]] = []
    waiting: list[int] = []  # entries of tool files decoded earlier and not handed on yet
    real = cache.LoadCache._load_shard

    def tracking(self: cache.LoadCache, shard: int) -> dict[str, Any]:
        waiting.append(sum(1 for entries in decoded for k in entries if not k.startswith("<")))
        decoded.append(real(self, shard))
        return decoded[-1]

    monkeypatch.setattr(cache.LoadCache, "_load_shard", tracking)
    parses.clear()
    warm = _load(project, monkeypatch)
    assert parses == []
    assert _whole(warm) == _whole(cold)
    # in the files' order every shard was decoded within a few files, its entries held
    # until their file came; a shard at a time, each is handed on before the next
    assert len(decoded) >= 12 and max(waiting) == 0


def test_a_partly_warm_load_over_many_shards_gives_the_registry_of_a_load_without_cache(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    _spread_registry(project, 40)
    _load(project, monkeypatch)
    for i in (3, 17, 31):  # misses amid hits: one of them defines a duplicate name
        edited = project / f"tools.d/f{i:02}.yaml"
        edited.write_text(edited.read_text().replace("Names shared", "Names the shared"))
    parses.clear()
    mixed = _load(project, monkeypatch)
    assert sorted(parses) == ["common.schema.yaml", "f03.yaml", "f17.yaml", "f31.yaml"]
    assert _whole(mixed) == _whole(load_registry(packs=False, cache=False))
    assert any("Names the shared" in t.description for t in mixed.tools.values())


def test_an_older_cache_format_is_a_cold_load(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    current = cache.FORMAT
    monkeypatch.setattr(cache, "FORMAT", current - 1)
    cache.code_fingerprint.cache_clear()
    try:
        cold = _load(project, monkeypatch)
        monkeypatch.setattr(cache, "FORMAT", current)
        cache.code_fingerprint.cache_clear()
        parses.clear()
        assert _summary(_load(project, monkeypatch)) == _summary(cold)
        assert sorted(parses) == ["common.schema.yaml", "other.yaml", "weather.yaml"]
    finally:
        cache.code_fingerprint.cache_clear()


def _shard_data(shard: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(shard.read_bytes().partition(b"\n")[2])
    return data


def test_a_shard_writes_each_shared_definition_and_dependency_once(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    # 40 files over the shards, every tool naming the same definitions and handler module:
    # each shard file holds each definition's text and each dependency record once, however
    # many of its entries hold them, and a warm load gives every tool all of them
    _spread_registry(project, 40)
    cold = _load(project, monkeypatch)
    city = '{"type":"string","minLength":1}'
    schema_file = str(project / "tools.d/schemas/common.schema.yaml")
    shards = [_shard_data(shard) for shard in _entries(project)]
    assert len(shards) >= 12
    for data in shards:
        files = [e for k, e in data["entries"].items() if not k.startswith("<")]
        assert len(files) >= 1
        assert data["parts"].count(city) == 1
        assert json.dumps(data).count(json.dumps(city)) == 1  # only in the table
        assert [d[0] for d in data["deps"]].count(schema_file) == 1
        assert json.dumps(data).count(json.dumps(schema_file)) == 1
        assert all(type(i) is int for e in files for i in e["files"] + e["modules"])
    parses.clear()
    warm = _load(project, monkeypatch)
    assert parses == []
    assert _whole(warm) == _whole(cold)


def test_a_partly_warm_write_keeps_the_other_entries_of_its_shards_usable(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    # an edited file's entry is written into shards whose other entries are read back and
    # written again (their parts and dependencies renumbered in the new tables): the next
    # load takes every entry, and gives the registry of a load without the cache
    _spread_registry(project, 40)
    _load(project, monkeypatch)
    for i in (3, 17, 31):
        edited = project / f"tools.d/f{i:02}.yaml"
        edited.write_text(edited.read_text().replace("Names shared", "Names the shared"))
    _load(project, monkeypatch)
    parses.clear()
    warm = _load(project, monkeypatch)
    assert parses == []
    assert _whole(warm) == _whole(load_registry(packs=False, cache=False))


def test_text_beyond_ascii_comes_back_from_the_cache_as_written(
    project: Path, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    # the shards are ASCII (other characters escaped): names, descriptions, keys, enum values
    # and a shared definition beyond Latin-1, and the positions after them, come back as
    # without the cache
    text = "¡Olá → 東京 🌧"
    write(
        project,
        {
            "tools.d/weather.yaml": TOOL.format(name="weather")
            .replace("Look up a city's weather.", f"{text}, the weather.")
            .replace("required: [city]", f"required: [city]\n  x-étiquette: {{mode: [{text}]}}"),
            "tools.d/schemas/common.schema.yaml": SCHEMA.replace(
                "minLength: 1", f"minLength: 1, description: '{text}'"
            ),
        },
    )
    cold = _load(project, monkeypatch)
    assert [d.format() for d in cold.diagnostics] == []
    for shard in _entries(project):
        assert shard.read_bytes().isascii()
    parses.clear()
    warm = _load(project, monkeypatch)
    assert parses == []
    assert _whole(warm) == _whole(cold)
    weather = warm.tools["weather"]
    assert weather.description == f"{text}, the weather."
    assert weather.input_schema["$defs"]["common_schema__City"]["description"] == text
    assert weather.locate("inputSchema", "x-étiquette", "mode") == cold.tools["weather"].locate(
        "inputSchema", "x-étiquette", "mode"
    )
