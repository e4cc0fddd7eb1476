"""The index kept in the load cache: a warm search loads no tool file; any change rebuilds it."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

import toolctl.loader as loader
from tests.cli_helpers import Capture, toolctl
from toolctl.search import SearchIndex, store


def index_file(root: Path) -> Path:
    return Path(os.environ["TOOLCTL_CACHE_DIR"]) / store.FILE


def found(capsys: Capture, query: str) -> list[str]:
    import json

    code, out, err = toolctl(capsys, "search", query, "-f", "json")
    assert code == 0, err
    return [r["name"] for r in json.loads(out)["results"]]


def count_loads(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """A list that grows by one per registry load from now on."""
    loads: list[int] = []
    real = loader.load_registry

    def counting(*args: Any, **kwargs: Any) -> Any:
        loads.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(loader, "load_registry", counting)
    return loads


def test_warm_search_loads_no_tool_file(
    search_project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = found(capsys, "read a text file")
    blob = index_file(search_project).read_bytes()
    assert blob.startswith(b"toolctl-cache hmac-sha256 ")  # sealed like the load cache
    loads = count_loads(monkeypatch)
    assert found(capsys, "read a text file") == first == found(capsys, "read a text file")
    assert loads == []


def test_the_kept_index_of_a_registry_without_tools_is_used_and_stays_semantic(
    search_project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    for tool in (search_project / "tools.d").iterdir():
        tool.unlink()
    assert found(capsys, "send an email message") == []  # builds and keeps the index
    loads = count_loads(monkeypatch)
    assert found(capsys, "send an email message") == []
    assert loads == []  # the kept index, not a rebuild
    from toolctl.cli.targets import project_of

    kept = store.from_record(store.read(project_of(None)) or {})
    assert kept is not None and kept.semantic  # the model is installed: no "lexical only" note
    _, err = capsys.readouterr()
    assert "lexical ranking only" not in err


def test_a_changed_tool_file_rebuilds_the_index(search_project: Path, capsys: Capture) -> None:
    assert "read_file" in found(capsys, "read a text file from disk")
    (search_project / "tools.d" / "files.yaml").write_text(
        (search_project / "tools.d" / "files.yaml")
        .read_text(encoding="utf-8")
        .replace("name: read_file", "name: load_document"),
        encoding="utf-8",
    )
    after = found(capsys, "read a text file from disk")
    assert "load_document" in after and "read_file" not in after


def test_disabling_a_tool_drops_it(search_project: Path, capsys: Capture) -> None:
    assert found(capsys, "stock exchange share price")[:1] == ["stock_price"]
    path = search_project / "tools.d" / "finance.yaml"
    text = path.read_text(encoding="utf-8").replace(
        "  - name: stock_price\n", "  - name: stock_price\n    enabled: false\n"
    )
    path.write_text(text, encoding="utf-8")
    assert "stock_price" not in found(capsys, "stock exchange share price")


def test_a_new_tool_file_is_seen(search_project: Path, capsys: Capture) -> None:
    assert found(capsys, "translate text into French") == []
    (search_project / "tools.d" / "translate.yaml").write_text(
        "toolctl: 1\nname: translate_text\n"
        "description: Translate text into another language, e.g. French.\n",
        encoding="utf-8",
    )
    assert found(capsys, "translate text into French")[:1] == ["translate_text"]


def test_same_content_reuses_the_index(
    search_project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file touched but unchanged: the registry is loaded again (its stat changed), the
    index is not rebuilt (its content key matches)."""
    first = found(capsys, "send an email")

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("the index was rebuilt")

    monkeypatch.setattr(SearchIndex, "build", classmethod(refuse))
    path = search_project / "tools.d" / "mail.yaml"
    path.write_bytes(path.read_bytes())
    os.utime(path, ns=(1, 1))
    assert found(capsys, "send an email") == first


def test_a_damaged_or_forged_index_is_rebuilt(search_project: Path, capsys: Capture) -> None:
    """Each damage is a miss when read (one process, no rebuild each: the suite's time); the
    last one is rebuilt by the next search and written afresh."""
    from toolctl.cli.targets import project_of

    first = found(capsys, "weather in Paris")
    path = index_file(search_project)
    blob = path.read_bytes()
    project = project_of(None)
    assert store.read(project) is not None
    damages = {
        "flip": blob[:-10] + bytes([blob[-10] ^ 1]) + blob[-9:],
        "truncate": blob[: len(blob) // 2],
        "garbage": b"\x00\xff" * 100,
        "empty": b"",
    }
    for damage, damaged in damages.items():
        path.write_bytes(damaged)
        assert store.read(project) is None, damage
    assert found(capsys, "weather in Paris") == first
    assert path.read_bytes() != damaged  # written afresh


def test_a_forged_index_with_a_right_shape_but_no_key_is_not_used(
    search_project: Path, capsys: Capture, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Whoever can write the cache directory but not read the key cannot plant an index."""
    found(capsys, "weather in Paris")
    path = index_file(search_project)
    monkeypatch.setenv("TOOLCTL_DATA_DIR", str(tmp_path / "other-key"))
    planted = path.read_bytes()  # sealed under the first key
    path.write_bytes(planted)
    loads = count_loads(monkeypatch)
    assert found(capsys, "weather in Paris")[:1] == ["get_current_weather"]
    assert loads == [1]  # not taken from the planted file


def test_no_cache_writes_no_index(search_project: Path, capsys: Capture) -> None:
    code, out, _ = toolctl(capsys, "--no-cache", "search", "weather in Paris")
    assert code == 0 and "get_current_weather" in out
    assert not index_file(search_project).exists()


def test_a_fifo_planted_as_the_index_is_a_miss_not_a_hang(
    search_project: Path, capsys: Capture
) -> None:
    path = index_file(search_project)
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    assert found(capsys, "weather in Paris")[:1] == ["get_current_weather"]


def test_kept_half_floats_widen_exactly() -> None:
    """The kept vectors' half floats become the float32 values numpy's own cast gives, for
    every finite half (zeros and subnormals too), so kept and built indexes rank alike."""
    np = pytest.importorskip("numpy")
    every = np.arange(1 << 16, dtype=np.uint32).astype("<u2").view("<f2")
    halves = every[np.isfinite(every)].reshape(-1, 8)
    out = np.empty(halves.shape, dtype=np.float32)
    store.widen_halves(halves, out)
    assert np.array_equal(out.view(np.uint32), halves.astype(np.float32).view(np.uint32))


FORGERIES = (
    "sizes past the end", "negative size", "odd lengths", "odd offsets", "vectors cut",
    "names not strings", "table not a list",
)  # fmt: skip


def _forge(header: dict[str, Any], tail: bytes, forge: str) -> tuple[dict[str, Any], bytes]:
    """``header`` and ``tail`` of a kept index with their layout broken the way ``forge`` says."""
    order = [name for name, _ in header["sections"]]
    if forge == "sizes past the end":
        header["sections"][-1][1] += 8
    elif forge == "negative size":
        header["sections"][0][1] = -1
    elif forge in ("odd lengths", "odd offsets", "vectors cut"):
        number = order.index(
            {"odd lengths": "lengths", "odd offsets": "offsets"}.get(forge, "vectors")
        )
        at = sum(size for _, size in header["sections"][:number])
        tail = tail[:at] + tail[at + 1 :]  # one byte fewer in that section
        header["sections"][number][1] -= 1
    elif forge == "names not strings":
        header["names"] = [1] * len(header["names"])
    else:
        header["sections"] = {"vectors": 1}
    return header, tail


def test_a_sealed_index_with_a_wrong_layout_is_a_miss(
    search_project: Path, capsys: Capture
) -> None:
    """An index sealed under the right key whose section table does not fit its bytes (only a
    bug or a stolen key could write one) is a miss, never a crash or a wrong ranking."""
    import json

    from toolctl import cache
    from toolctl.cli.targets import project_of

    first = found(capsys, "weather in Paris")
    path = index_file(search_project)
    key = cache.cache_key(path.parent.parent, create=False)
    assert key is not None
    intact = path.read_bytes()
    start = cache.unsealed_at(intact, key)
    assert start is not None
    end = intact.index(b"\0", start)
    project = project_of(None)
    assert store.from_record(store.read(project) or {}) is not None
    for forge in FORGERIES:
        header, tail = _forge(json.loads(intact[start:end]), intact[end + 1 :], forge)
        forged = cache._seal(json.dumps(header).encode() + b"\0" + tail, key)
        path.write_bytes(forged)
        record = store.read(project)
        assert record is not None and store.from_record(record) is None, forge
    assert found(capsys, "weather in Paris") == first  # the last one: rebuilt
    assert path.read_bytes() != forged  # and written afresh
