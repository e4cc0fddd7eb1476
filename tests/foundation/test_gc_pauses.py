"""The collector pauses around loading: what they let pile up leaves the young generation
unscanned, and is frozen with the rest once the program freezes for good."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from toolctl import yamlsrc


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[int]]:
    calls: list[int] = []
    real = gc.get_freeze_count

    def counting() -> int:
        calls.append(1)
        return real()

    monkeypatch.setattr(gc, "get_freeze_count", counting)
    yield calls
    yamlsrc.unfreeze()


def test_objects_made_in_a_pause_end_frozen_once_the_program_froze(counted: list[int]) -> None:
    yamlsrc.freeze_for_good()
    before = gc.get_freeze_count()
    counted.clear()
    with yamlsrc.gc_paused():
        made = [[i] for i in range(1000)]
    assert counted == []  # not asked: walking the frozen objects costs a millisecond a time
    assert gc.get_freeze_count() >= before + len(made)
    assert gc.isenabled()


def test_without_a_freeze_for_good_nothing_stays_frozen(counted: list[int]) -> None:
    yamlsrc.unfreeze()
    with yamlsrc.gc_paused():
        _ = [[i] for i in range(1000)]
    assert gc.get_freeze_count() == 0
    assert gc.isenabled()
