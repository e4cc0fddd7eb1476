"""``$TOOLCTL_STATE_KEY``: the approval binding secret a shared (PostgreSQL) history is given."""

from __future__ import annotations

import pytest

from toolctl.runtime.errors import StateError
from toolctl.runtime.history.binding import configured_key


def test_a_hex_key_is_the_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TOOLCTL_STATE_KEY", "ab" * 32)
    assert configured_key() == bytes.fromhex("ab" * 32)


@pytest.mark.parametrize("value", [None, ""])
def test_no_key_leaves_the_store_its_own(
    monkeypatch: pytest.MonkeyPatch, value: str | None
) -> None:
    if value is None:
        monkeypatch.delenv("TOOLCTL_STATE_KEY", raising=False)
    else:
        monkeypatch.setenv("TOOLCTL_STATE_KEY", value)
    assert configured_key() is None


@pytest.mark.parametrize("value", ["not hex", "ab" * 15])
def test_an_unusable_key_is_refused_with_how_to_fix(
    monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    monkeypatch.setenv("TOOLCTL_STATE_KEY", value)
    with pytest.raises(StateError, match="TOOLCTL_STATE_KEY is not a usable key") as info:
        configured_key()
    assert info.value.hint == "give at least 32 hex digits"
