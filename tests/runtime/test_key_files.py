"""Key files beside the run history (issue 20, classes 6 and 7): ``state.db.key`` and the
server's ``request-state.key`` go through one reader (:mod:`toolctl.keyfile`, which also reads
the cache's key), so both refuse the same things: a FIFO or other non-regular file (at once: it
must not hang), a key other users can read or write, and junk. Each refusal is a
:class:`StateError` naming the file and the fix."""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest

from toolctl.keyfile import KeyFileError, ensure_key_file, read_key_file
from toolctl.runtime.errors import StateError
from toolctl.runtime.history.binding import key_path, load_key

pytestmark = pytest.mark.timeout(30)  # a FIFO that blocked the reader would hang here


@pytest.fixture
def request_state_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> Callable[[], list[bytes]]:
    """The server's requestState keys for a registry whose SQLite history is in ``tmp_path``."""
    pytest.importorskip("mcp")
    from toolctl.runtime.history.capabilities import Capabilities
    from toolctl.server import roundtrip

    history = SimpleNamespace(path=tmp_path / "state.db", capabilities=Capabilities(history=True))
    monkeypatch.setattr("toolctl.runtime.api.resolve_store", lambda registry: history)
    return lambda: roundtrip.state_keys(SimpleNamespace())  # type: ignore[arg-type]


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_planted_as_the_history_key_is_refused_without_hanging(tmp_path: Path) -> None:
    db = tmp_path / "state.db"
    os.mkfifo(key_path(db), 0o600)
    with pytest.raises(StateError, match="is not a regular file") as caught:
        load_key(key_path(db))
    assert caught.value.hint and f"delete {key_path(db)}" in caught.value.hint


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="no FIFOs here")
def test_a_fifo_planted_as_the_request_state_key_is_refused_without_hanging(
    tmp_path: Path, request_state_keys: Callable[[], list[bytes]]
) -> None:
    os.mkfifo(tmp_path / "request-state.key", 0o600)
    with pytest.raises(StateError, match=r"requestState key .* is not a regular file"):
        request_state_keys()


def test_a_directory_planted_as_a_key_is_refused(tmp_path: Path) -> None:
    (tmp_path / "k").mkdir(mode=0o700)
    with pytest.raises(KeyFileError, match="is not a regular file"):
        read_key_file(tmp_path / "k", "the key")


def test_a_request_state_key_other_users_can_read_is_refused_like_the_history_key(
    tmp_path: Path, request_state_keys: Callable[[], list[bytes]]
) -> None:
    key = tmp_path / "request-state.key"
    key.write_bytes(os.urandom(32))
    key.chmod(0o666)
    with pytest.raises(StateError, match=r"readable or writable by other users \(mode 666\)"):
        request_state_keys()
    db = tmp_path / "state.db"
    key_path(db).write_text(os.urandom(32).hex(), encoding="ascii")
    key_path(db).chmod(0o666)
    with pytest.raises(StateError, match=r"readable or writable by other users \(mode 666\)"):
        load_key(key_path(db))


def test_a_new_request_state_key_is_private_and_reused(
    tmp_path: Path, request_state_keys: Callable[[], list[bytes]]
) -> None:
    first = request_state_keys()
    assert first == request_state_keys() and len(first[0]) == 32
    mode = stat.S_IMODE((tmp_path / "request-state.key").stat().st_mode)
    assert mode == 0o600


@pytest.mark.parametrize("junk", [b"", b"short", b"x" * 10_000])
def test_junk_in_a_request_state_key_is_a_clear_error(
    tmp_path: Path, request_state_keys: Callable[[], list[bytes]], junk: bytes
) -> None:
    key = tmp_path / "request-state.key"
    key.write_bytes(junk)
    key.chmod(0o600)
    with pytest.raises(StateError, match=r"request-state\.key"):
        request_state_keys()


def test_a_key_file_is_created_once_and_then_read(tmp_path: Path) -> None:
    path = tmp_path / "k"
    assert ensure_key_file(path, b"first", "the key") == b"first"
    assert ensure_key_file(path, b"second", "the key") == b"first"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


@pytest.mark.parametrize("junk", ["", "not hex!", "ab" * 8, "ab" * 4000])
def test_junk_in_the_history_key_is_a_clear_error_with_the_fix(tmp_path: Path, junk: str) -> None:
    path = key_path(tmp_path / "state.db")
    path.write_text(junk, encoding="ascii")
    path.chmod(0o600)
    with pytest.raises(StateError, match=r"run history key .*state\.db\.key") as caught:
        load_key(path)
    assert caught.value.hint and f"delete {path}" in caught.value.hint
    assert "pending runs" in caught.value.hint


def test_a_new_history_key_is_private_hex_and_reused(tmp_path: Path) -> None:
    path = key_path(tmp_path / "state.db")
    first = load_key(path)
    assert len(first) == 32 and load_key(path) == first
    assert bytes.fromhex(path.read_text(encoding="ascii")) == first  # the format kept on disk
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
