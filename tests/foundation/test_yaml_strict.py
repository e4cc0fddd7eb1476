"""The strict YAML loader: every case of reliability.md §2.1 (1-15)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolctl import yamlsrc
from toolctl.errors import YamlError
from toolctl.yamlsrc import MAX_FILE_BYTES, load_file, loads, read_text

from .conftest import codes


def _error(text: str) -> YamlError:
    with pytest.raises(YamlError) as info:
        loads(text)
    return info.value


# 1 ------------------------------------------------------------------------------------------


def test_anchor_is_rejected_with_its_position() -> None:
    err = _error("a: &x [1]\nb: *x\n")
    assert err.code == "TC102"
    assert "anchors and aliases are not allowed" in err.message
    assert (err.line, err.col) == (1, 4)


def test_anchor_on_a_mapping_key_is_rejected_too() -> None:
    err = _error("a: 1\n&k b: 2\n")
    assert err.code == "TC102"
    assert "anchor &k" in err.message
    assert (err.line, err.col) == (2, 1)


def test_alias_file_is_reported_and_other_files_still_load(registry_of: Any) -> None:
    registry = registry_of(
        {
            "tools.d/bad.yaml": "a: &x [1]\nb: *x\n",
            "tools.d/good.yaml": "toolctl: 1\nname: good\ndescription: Fine.\n",
        }
    )
    assert list(registry.tools) == ["good"]
    [diag] = registry.diagnostics
    assert (diag.file, diag.line, diag.col, diag.code) == ("tools.d/bad.yaml", 1, 4, "TC102")


# 2 ------------------------------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_billion_laughs_is_rejected_at_parse() -> None:
    lines = ['a0: &a0 ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]']
    for i in range(1, 9):
        refs = ",".join([f"*a{i - 1}"] * 9)
        lines.append(f"a{i}: &a{i} [{refs}]")
    text = "\n".join(lines) + "\n"
    assert len(text) < 600
    err = _error(text)
    assert err.code == "TC102"
    assert err.line == 1  # the very first anchor: nothing was expanded


# 3 ------------------------------------------------------------------------------------------


def test_merge_key_is_rejected() -> None:
    err = _error("b: &b {y: 1}\nx: {<<: *b}\n")
    assert err.code == "TC102"
    # without anchors, a bare merge key is still refused
    err = _error("x: {<<: {y: 1}}\n")
    assert err.code == "TC102"
    assert "merge keys" in err.message
    assert (err.line, err.col) == (1, 5)


def test_quoted_double_angle_is_an_ordinary_key() -> None:
    assert loads("'<<': 1\n").data == {"<<": 1}


# 4 ------------------------------------------------------------------------------------------


def test_duplicate_key_names_line_and_column() -> None:
    err = _error("name: a\nname: b\n")
    assert err.code == "TC104"
    assert "duplicate key 'name'" in err.message
    assert (err.line, err.col) == (2, 1)


def test_nested_duplicate_in_input_schema_properties() -> None:
    text = (
        "inputSchema:\n"
        "  type: object\n"
        "  properties:\n"
        "    city: {type: string}\n"
        "    city: {type: integer}\n"
    )
    err = _error(text)
    assert err.code == "TC104"
    assert (err.line, err.col) == (5, 5)
    assert "first defined at line 4" in err.message


# 5 ------------------------------------------------------------------------------------------


def test_non_string_keys_are_rejected() -> None:
    err = _error("properties: {1: {type: string}}\n")
    assert err.code == "TC105"
    assert "mapping keys must be strings" in err.message
    assert err.hint is not None and '"1"' in err.hint


def test_on_and_1_keys_never_merge() -> None:
    # `on` stays the string "on", so it cannot collide with 1; the int key itself is refused.
    err = _error("properties:\n  on: {type: string}\n  1: {type: string}\n")
    assert err.code == "TC105"
    assert (err.line, err.col) == (3, 3)
    assert loads("properties:\n  on: {}\n  'true': {}\n").data == {
        "properties": {"on": {}, "true": {}}
    }


def test_complex_key_is_rejected() -> None:
    assert _error("? [a]\n: b\n").code == "TC105"


# 6, 7 ---------------------------------------------------------------------------------------


def test_yaml_11_surprises_stay_strings() -> None:
    text = (
        "country: NO\nenabled: on\nanswer: yes\nok: true\nmode: 0755\nt: 1:30\n"
        "d: 2026-01-02\ndt: 2026-01-02 10:00:00\ne: 1e3\nf: 1.5\nn: ~\ny: y\noff: Off\n"
    )
    data = loads(text).data
    assert data == {
        "country": "NO",
        "enabled": "on",
        "answer": "yes",
        "ok": True,
        "mode": "0755",
        "t": "1:30",
        "d": "2026-01-02",
        "dt": "2026-01-02 10:00:00",
        "e": 1000.0,
        "f": 1.5,
        "n": None,
        "y": "y",
        "off": "Off",
    }
    json.dumps(data, allow_nan=False)  # the export is JSON-serializable


@pytest.mark.parametrize("text", [".inf", "-.inf", ".nan", "1e400"])
def test_non_finite_numbers_never_load_as_floats(text: str) -> None:
    try:
        value = loads(f"x: {text}\n").data["x"]
    except YamlError as err:
        assert err.code == "TC109"
    else:
        assert isinstance(value, str)


# 8 ------------------------------------------------------------------------------------------


def test_unquoted_version_like_number_is_a_format_error(registry_of: Any) -> None:
    registry = registry_of({"tools.d/t.yaml": "toolctl: 1\nname: t\ndescription: d\ntitle: 1.10\n"})
    [diag] = registry.diagnostics
    assert diag.code == "TC201"
    assert "1.1 is not of type 'string'" in diag.message
    assert (diag.line, diag.col) == (4, 8)


# 9 ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        'x: !!python/object/apply:os.system ["touch {marker}"]\n',
        "x: !!binary aGVsbG8=\n",
        "x: !!set {a, b}\n",
        "x: !env HOME\n",
        "x: !!timestamp 2026-01-02\n",
    ],
)
def test_tags_are_rejected_and_nothing_runs(text: str, tmp_path: Path) -> None:
    marker = tmp_path / "marker"
    err = _error(text.replace("{marker}", str(marker)))
    assert err.code == "TC103"
    assert "is not allowed" in err.message
    assert (err.line, err.col) == (1, 4)
    assert not marker.exists()


def test_explicit_str_tag_is_allowed() -> None:
    assert loads("x: !!str 0755\n").data == {"x": "0755"}


# 10 -----------------------------------------------------------------------------------------


def test_multiple_documents_are_rejected() -> None:
    err = _error("a: 1\n---\nb: 2\n")
    assert err.code == "TC106"
    assert "multiple YAML documents" in err.message
    assert err.line == 2


# 11 -----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    ["[" * 200 + "]" * 200, "[" * 5000 + "]" * 5000, "".join(f"{' ' * i}k:\n" for i in range(80))],
)
def test_deep_nesting_is_an_error_not_recursion(text: str) -> None:
    err = _error(text)
    assert err.code == "TC107"
    assert "nesting deeper than 64" in err.message


def test_nesting_up_to_the_limit_loads() -> None:
    depth = yamlsrc.MAX_DEPTH
    assert loads("[" * depth + "]" * depth).data is not None


# 12 -----------------------------------------------------------------------------------------


def test_large_file_rejected_before_opening(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big = tmp_path / "big.yaml"
    with big.open("wb") as fh:
        fh.truncate(2 * 1024 * 1024)

    def no_open(*args: Any, **kwargs: Any) -> int:
        raise AssertionError("the file was opened")

    monkeypatch.setattr(yamlsrc.os, "open", no_open)
    with pytest.raises(YamlError) as info:
        read_text(big)
    assert info.value.code == "TC108"
    assert f"file larger than {MAX_FILE_BYTES} bytes" in info.value.message


def test_file_growing_after_stat_is_read_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size check does not trust stat alone: at most max+1 bytes are ever read."""
    path = tmp_path / "grows.yaml"
    path.write_bytes(b"a: 1\n" * 1000)
    requested: list[int] = []
    real_read = os.read

    def spy_read(fd: int, n: int) -> bytes:
        requested.append(n)
        return real_read(fd, n)

    monkeypatch.setattr(yamlsrc.os, "read", spy_read)
    with pytest.raises(YamlError) as info:
        read_text(path, max_bytes=100)  # stat says 5000 > 100: refused before reading
    assert info.value.code == "TC108"
    assert requested == []
    real_stat = Path.stat
    monkeypatch.setattr(
        Path, "stat", lambda self, **kw: os.stat_result((*real_stat(self)[:6], 10, 0, 0, 0))
    )
    with pytest.raises(YamlError) as info:
        read_text(path, max_bytes=100)  # stat lies (10 bytes): the bounded read catches it
    assert info.value.code == "TC108"
    assert requested and requested[0] == 11  # the size stat gave, and one more
    assert sum(requested) == 101  # then on, in chunks, to max + 1 and no further


def test_large_file_in_registry_is_reported_by_name(registry_of: Any, tmp_path: Path) -> None:
    (tmp_path / "tools.d").mkdir()
    with (tmp_path / "tools.d" / "huge.yaml").open("wb") as fh:
        fh.truncate(2 * 1024 * 1024)
    registry = registry_of({"tools.d/ok.yaml": "toolctl: 1\nname: ok\ndescription: d\n"})
    assert list(registry.tools) == ["ok"]
    [diag] = registry.diagnostics
    assert (diag.file, diag.code) == ("tools.d/huge.yaml", "TC108")


# 13 -----------------------------------------------------------------------------------------


def test_non_utf8_names_line_and_column(tmp_path: Path) -> None:
    path = tmp_path / "latin.yaml"
    path.write_bytes(b"name: ok\ndescription: caf\xff\xfe\n")
    with pytest.raises(YamlError) as info:
        load_file(path, "tools.d/latin.yaml")
    err = info.value
    assert err.code == "TC109"
    assert "not valid UTF-8" in err.message and "0xff" in err.message
    assert (err.line, err.col) == (2, 17)


def test_non_utf8_in_registry_names_the_file(registry_of: Any, tmp_path: Path) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / "bad.yaml").write_bytes(b"\xff\xfe")
    registry = registry_of({})
    [diag] = registry.diagnostics
    assert (diag.file, diag.line, diag.col, diag.code) == ("tools.d/bad.yaml", 1, 1, "TC109")


@pytest.mark.parametrize(
    ("text", "where"),
    [("a: \x00\n", (1, 4)), ("é: b\nc: x\x07y\n", (2, 5)), ("- \x1b[31m\n", (1, 3))],
)
def test_control_characters_are_located(text: str, where: tuple[int, int]) -> None:
    err = _error(text)
    assert err.code == "TC101"
    assert (err.line, err.col) == where
    assert "is not allowed" in err.message and "<unicode string>" not in err.message


def test_bom_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "bom.yaml"
    path.write_bytes(b"\xef\xbb\xbftoolctl: 1\nname: x\n")
    assert load_file(path).data == {"toolctl": 1, "name": "x"}


# 14 -----------------------------------------------------------------------------------------


@pytest.mark.timeout(10)
def test_fifo_is_refused_without_hanging(registry_of: Any, tmp_path: Path) -> None:
    (tmp_path / "tools.d").mkdir()
    os.mkfifo(tmp_path / "tools.d" / "pipe.yaml")
    registry = registry_of({"tools.d/ok.yaml": "toolctl: 1\nname: ok\ndescription: d\n"})
    assert list(registry.tools) == ["ok"]
    [diag] = registry.diagnostics
    assert (diag.file, diag.code) == ("tools.d/pipe.yaml", "TC110")
    assert "not a regular file" in diag.message


def test_unreadable_file_is_a_diagnostic_not_a_crash(
    registry_of: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A file that stats but cannot be opened (mode 000 for a non-root user) is TC110."""
    real_open = os.open

    def deny(path: Any, flags: int, *args: Any) -> int:
        if str(path).endswith("locked.yaml"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, flags, *args)

    monkeypatch.setattr(yamlsrc.os, "open", deny)
    registry = registry_of(
        {
            "tools.d/locked.yaml": "toolctl: 1\nname: locked\ndescription: d\n",
            "tools.d/ok.yaml": "toolctl: 1\nname: ok\ndescription: d\n",
        }
    )
    assert list(registry.tools) == ["ok"]
    [diag] = registry.diagnostics
    assert (diag.file, diag.code) == ("tools.d/locked.yaml", "TC110")
    assert diag.message == "cannot read file: Permission denied"
    assert diag.hint == "check the file's permissions"


@pytest.mark.timeout(10)
def test_device_is_refused_without_hanging(tmp_path: Path) -> None:
    link = tmp_path / "zero.yaml"
    link.symlink_to("/dev/zero")
    with pytest.raises(YamlError) as info:
        read_text(link)
    assert info.value.code == "TC110"


@pytest.mark.timeout(10)
@pytest.mark.parametrize("target", ["/dev/zero", "outside/secret.yaml"])
def test_symlink_escaping_the_registry_is_refused(
    registry_of: Any, tmp_path: Path, target: str
) -> None:
    (tmp_path / "outside").mkdir()
    (tmp_path / "outside" / "secret.yaml").write_text("toolctl: 1\nname: s\ndescription: x\n")
    (tmp_path / "tools.d").mkdir()
    dest = target if target.startswith("/") else str(tmp_path / target)
    (tmp_path / "tools.d" / "link.yaml").symlink_to(dest)
    registry = registry_of({})
    assert len(registry) == 0
    [diag] = registry.diagnostics
    assert (diag.file, diag.code) == ("tools.d/link.yaml", "TC110")
    assert "outside the tools directory" in diag.message


def test_symlink_inside_the_registry_loads(registry_of: Any, tmp_path: Path) -> None:
    (tmp_path / "tools.d" / "shared").mkdir(parents=True)
    (tmp_path / "tools.d" / "shared" / "t.yml").write_text("toolctl: 1\nname: t\ndescription: d\n")
    (tmp_path / "tools.d" / "alias.yaml").symlink_to(tmp_path / "tools.d" / "shared" / "t.yml")
    registry = registry_of({})
    assert list(registry.tools) == ["t"]
    assert codes(registry) == ["TC203", "TC203"]  # the same tool reached twice is a duplicate


def test_hidden_files_and_editor_locks_are_skipped(registry_of: Any, tmp_path: Path) -> None:
    (tmp_path / "tools.d").mkdir()
    (tmp_path / "tools.d" / ".#t.yaml").symlink_to("user@host.1234:1700000000")  # Emacs lock
    (tmp_path / "tools.d" / ".draft.yaml").write_text("not: [valid")
    registry = registry_of({"tools.d/t.yaml": "toolctl: 1\nname: t\ndescription: d\n"})
    assert list(registry.tools) == ["t"]
    assert registry.diagnostics == []


# 15 -----------------------------------------------------------------------------------------

_YAMLISH = st.text(
    alphabet=st.sampled_from([*"ab01:-?[]{},&*!|>'\"#%@`~.<= \t\n", "\\", "\ufeff", "é"]),
    max_size=80,
)


@settings(max_examples=400, deadline=None)
@given(_YAMLISH | st.text(max_size=40))
def test_any_text_loads_as_json_or_raises_located_yamlerror(text: str) -> None:
    try:
        doc = loads(text)
    except YamlError as err:
        assert err.message and err.code.startswith("TC1")
        assert err.line >= 1 and err.col >= 1, err.message
        return
    json.dumps(doc.data, allow_nan=False)


@settings(max_examples=200, deadline=None)
@given(st.binary(max_size=60) | _YAMLISH.map(lambda t: t.encode("utf-8")))
def test_any_bytes_in_a_file_load_or_raise_located_yamlerror(data: bytes) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "t.yaml"
        path.write_bytes(data)
        try:
            doc = load_file(path)
        except YamlError as err:
            assert err.code.startswith("TC1") and err.line >= 1 and err.col >= 1, err.message
            return
        json.dumps(doc.data, allow_nan=False)
