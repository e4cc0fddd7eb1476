"""The per-file fast paths of a parse agree with the slow ones, on bad input as well as good.

* Plain scalars that are not words (nulls, booleans, numbers) are resolved once per process and
  remembered (``yamlparse._RESOLVED``): a remembered resolution must give what resolving the
  text afresh gives (value and type), and what fails to resolve (a number JSON cannot hold)
  must fail, with the same message and position, every time it is met.
* A file's bytes are decoded by the built-in UTF-8 decoder after dropping a BOM, instead of by
  the ``utf-8-sig`` codec: the text, and every error's message, line and column, must be what
  that codec gave.
* How messages name a tool file (``discovery.short``, once per file) splits the path's text
  instead of asking pathlib for its parent: the name must be the one pathlib's parent gave.
"""

from __future__ import annotations

import itertools
import os
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from toolctl import yamlparse
from toolctl.discovery import short
from toolctl.errors import YamlError
from toolctl.yamlsrc import decode_text

from .test_yaml12 import CORPUS

loads = yamlparse.parse  # the strict parser (toolctl.yamlsrc.loads takes the fast one first)

# texts that resolve, texts that fail (TC109), texts that stay strings, and near misses
_TRICKY = (
    *("0", "-0", "+0", "0.0", "-0.0", "1", "1.0", "01", "1e3", "1E3", "0x1F", "0o17", "0755"),
    *(".5", "-.5", "+1", "1_000", "1:30", "10.0.3.7", "22:00:00Z", "../docs/readme.md#usage"),
    *("1e400", "-1e400", ".inf", "-.Inf", ".nan", ".NaN", "9" * 4001, "0x" + "f" * 4000),
    *("null", "Null", "~", "", "true", "True", "false", "FALSE", "yes", "no", "on", "-", "."),
)
_TEXTS = sorted({*_TRICKY, *CORPUS})


def _outcome(text: str) -> Any:
    """What ``text`` loads to as a value, an item and a key: (type, repr) of what it loads to,
    or the error's exact fields."""
    out: list[Any] = []
    for doc in (f"k: {text}\n", f"k:\n- {text}\n", f"{text}: v\n"):
        try:
            data = loads(doc).data  # the strict parser, whose memo this is
        except YamlError as err:
            out.append(("error", err.code, err.message, err.line, err.col, err.hint))
            continue
        value = data["k"] if "k" in data else next(iter(data))
        value = value[0] if type(value) is list else value
        out.append((type(value).__name__, repr(value)))
    return out


@pytest.fixture
def fresh(monkeypatch: pytest.MonkeyPatch) -> dict[str, Any]:
    """An empty memory of resolutions, holding only what the module starts with."""
    start = dict(yamlparse._RESOLVED)
    for text in list(start):
        if start[text] not in (None, True, False) or type(start[text]) is int:
            del start[text]  # numbers remembered by earlier tests in this process
    monkeypatch.setattr(yamlparse, "_RESOLVED", start)
    return start


def test_a_remembered_resolution_is_the_fresh_one(fresh: dict[str, Any]) -> None:
    first = {text: _outcome(text) for text in _TEXTS}  # resolved afresh, then remembered
    assert any(type(v) is not bool and v is not None for v in fresh.values())
    again = {text: _outcome(text) for text in _TEXTS}  # from the memory where it holds one
    assert again == first
    # and each is what a memory-free resolution gives
    for text in _TEXTS:
        fresh.clear()
        fresh.update(dict.fromkeys(("null", "Null", "NULL", "~", "")))
        fresh.update(dict.fromkeys(("true", "True", "TRUE"), True))
        fresh.update(dict.fromkeys(("false", "False", "FALSE"), False))
        assert _outcome(text) == first[text], text


def test_what_cannot_be_held_fails_every_time(fresh: dict[str, Any]) -> None:
    for text in ("1e400", ".nan", "-.inf", "9" * 4001):
        outcomes = [_outcome(text) for _ in range(3)]
        assert outcomes[0][0][:2] == ("error", "TC109"), outcomes[0]
        assert outcomes == [outcomes[0]] * 3
        assert text not in fresh


def test_the_memory_stays_small(fresh: dict[str, Any], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(yamlparse, "_RESOLVED_MAX", len(fresh) + 50)
    numbers = [str(n) for n in range(200)] + ["1" * 60]
    doc = loads("k: [" + ", ".join(numbers) + "]\n")
    assert doc.data["k"] == [int(n) for n in numbers]  # past the cap, resolved all the same
    assert len(fresh) == yamlparse._RESOLVED_MAX
    assert "1" * 60 not in fresh  # long texts are never kept


def test_a_remembered_number_is_never_a_boolean_or_a_quoted_string(
    fresh: dict[str, Any],
) -> None:
    doc = loads("a: 1\nb: 0\nc: true\nd: '1'\ne: \"0\"\nf: 1\ng: 0\nh: '1.5'\ni: 1.5\n")
    types = {k: type(v) for k, v in doc.data.items()}
    expected = {"a": int, "b": int, "c": bool, "d": str, "e": str, "f": int, "g": int}
    assert types == {**expected, "h": str, "i": float}, doc.data


# ------------------------------------------------------------------------------ decoding


def _decoded_by_the_codec(raw: bytes) -> Any:
    """The text, or (line, col, byte) of the error, as decoding with "utf-8-sig" gives them
    (the error's offset counts from past the BOM)."""
    try:
        return raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raw = raw[3:] if raw[:3] == _BOM else raw
        line = raw.count(b"\n", 0, exc.start) + 1
        col = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        return (line, col, f"file is not valid UTF-8 (byte 0x{raw[exc.start]:02x})")


def _decoded(raw: bytes) -> Any:
    try:
        return decode_text(raw)
    except YamlError as err:
        assert err.code == "TC109" and err.hint == "save the file as UTF-8"
        return (err.line, err.col, err.message)


_BOM = "\ufeff".encode()
_PIECES = [b"a", b"\n", b"\r\n", b": ", _BOM, b"\xef\xbb", b"\xff", b"\xc3", b"\xc3\xa9"]


def test_decoding_is_the_codecs_on_chosen_bytes() -> None:
    chosen = [b"", _BOM, _BOM * 2, b"\xef\xbb", _BOM + b"a: 1\nb: \xff\n", b"a: 1\nb: \xff\n"]
    for raw in chosen + [b"".join(p) for p in itertools.product(_PIECES, repeat=3)]:
        assert _decoded(raw) == _decoded_by_the_codec(raw), raw


def test_a_bad_byte_after_a_bom_is_named_where_it_is() -> None:
    assert _decoded(_BOM + b"a: 1\nb: \xff\n") == (2, 4, "file is not valid UTF-8 (byte 0xff)")
    assert _decoded(_BOM + b"\xffa") == (1, 1, "file is not valid UTF-8 (byte 0xff)")


@settings(max_examples=300, deadline=None)
@given(st.booleans(), st.binary(max_size=40) | st.text(max_size=20).map(str.encode))
def test_decoding_is_the_codecs_on_any_bytes(bom: bool, body: bytes) -> None:
    raw = _BOM + body if bom else body
    assert _decoded(raw) == _decoded_by_the_codec(raw)


# ------------------------------------------------------------------------------ file names


def _short_by_pathlib(path: Path) -> str:
    """How :func:`toolctl.discovery.short` named a path when it asked pathlib for the parent."""
    if path.name not in ("", ".", ".."):
        parent = os.path.relpath(str(path.parent), os.getcwd())
        if not parent.startswith(".."):
            return path.name if parent == "." else os.path.join(parent, path.name)
    rel = os.path.relpath(path)
    return rel if not rel.startswith("..") else str(path)


def test_file_names_are_pathlibs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "work" / "tools.d" / "deep").mkdir(parents=True)
    monkeypatch.chdir(tmp_path / "work")
    names = ["x.yaml", "tools.d/x.yaml", "tools.d/deep/x.yaml", "./tools.d//x.yaml", "."]
    names += ["..", "../x.yaml", "../work/tools.d/x.yaml", "tools.d/../x.yaml", "/", "/x.yaml"]
    names += ["tools.d/deep/..", "tools.d/.hidden.yaml", "tools.d/x.yaml/", "é 😀/x y.yaml"]
    paths = [Path(n) for n in names]
    paths += [tmp_path / "work" / p for p in paths if not p.is_absolute()]
    paths += [tmp_path / "elsewhere.yaml", Path(os.sep) / "outside" / "x.yaml"]
    for path in paths:
        assert short(path) == _short_by_pathlib(path), path
